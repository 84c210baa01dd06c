import type { Knex } from 'knex';
import type { OperationHandler } from '@platform/shared';
import type { AssessmentPatch } from '../../domain/assessments.ts';
import type { Principal } from '../../domain/principal.ts';
import { startAssessment, updateAssessment } from '../../flows/assessments.ts';
import { inTenant } from '../../store/tenant-scope.ts';
import type { PostHandler } from '../idempotency.ts';
import { presentEntity } from '../present.ts';

/** Start (a POST, so under its Idempotency-Key) and update of an assessment (docs/adr/0027-assessments.md); both answer the whole profile. */
export function assessmentHandlers(db: Knex): { posts: Record<string, PostHandler>; others: Record<string, OperationHandler<Principal>> } {
  return {
    posts: {
      startAssessment: async (ctx, run) => {
        const body = (ctx.body ?? {}) as { questionnaire_id?: string };
        const { row, questionnaireId } = await run((trx, tenant) =>
          startAssessment({ trx, tenant, principal: ctx.principal, now: new Date().toISOString() }, ctx.params.profile_id!, body.questionnaire_id),
        );
        return {
          status: 201,
          headers: { Location: `/suitability-profiler/profiles/${row.id}/assessments/${questionnaireId}` },
          body: presentEntity(row),
        };
      },
    },
    others: {
      updateAssessment: async (ctx) => {
        const row = await inTenant(db, ctx.principal.tenantId, (trx, tenant) =>
          updateAssessment(
            { trx, tenant, principal: ctx.principal, now: new Date().toISOString() },
            ctx.params.profile_id!,
            ctx.params.questionnaire_id!,
            ctx.body as AssessmentPatch,
            ctx.headers['if-match'],
          ),
        );
        return { status: 200, body: presentEntity(row) };
      },
    },
  };
}
