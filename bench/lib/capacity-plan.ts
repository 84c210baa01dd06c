// From the measured figures to a replica count for a nightly batch of a given size in a given time:
// the rate it needs, each component's CPU per optimization, and what a pod of the production
// overlay may use of its CPU limit before the autoscaler adds another (its target utilisation).
import { round } from './harness.ts';

export type PlanInput = {
  portfolios: number;
  seconds: number;
  /** CPU ms per optimization, summed over the replicas of each component, measured. */
  cpuMs: { data: number; management: number; postgres: number; nats: number };
  /** Optimizations/s one data replica reached alone on the shared machine, measured. */
  oneReplicaRate: number;
  /** Seconds to write the batch's requests for `writtenFor` portfolios (one replica, in series). */
  writtenS: number;
  writtenFor: number;
  /** The production pods' CPU limits (cores) and the autoscaler's target utilisation. */
  limits: { data: number; management: number };
  utilisation: number;
};

export type Plan = {
  rate: number;
  /** Cores each component must spend at that rate. */
  cores: { data: number; management: number; postgres: number; nats: number };
  replicas: { data: number; management: number };
  /** Data replicas at the rate one replica reached here, on two cores shared with everything else. */
  dataReplicasAtMeasuredRate: number;
  /** Seconds the one replica that writes the batch needs for all its requests. */
  writeS: number;
};

export function plan(input: PlanInput): Plan {
  const rate = input.portfolios / input.seconds;
  const cores = {
    data: (rate * input.cpuMs.data) / 1000,
    management: (rate * input.cpuMs.management) / 1000,
    postgres: (rate * input.cpuMs.postgres) / 1000,
    nats: (rate * input.cpuMs.nats) / 1000,
  };
  const podsFor = (c: number, limit: number) => Math.max(1, Math.ceil(c / (limit * input.utilisation)));
  return {
    rate: round(rate, 1),
    cores: { data: round(cores.data), management: round(cores.management), postgres: round(cores.postgres), nats: round(cores.nats) },
    replicas: { data: podsFor(cores.data, input.limits.data), management: podsFor(cores.management, input.limits.management) },
    dataReplicasAtMeasuredRate: Math.ceil(rate / input.oneReplicaRate),
    writeS: round((input.writtenS * input.portfolios) / input.writtenFor, 0),
  };
}
