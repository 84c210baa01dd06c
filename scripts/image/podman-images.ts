// Questions the image scripts ask podman about local images.
import type { Podman } from '@platform/dev-stack/podman';

/** The label that carries the hash of what an image was made from, so that the same recipe is not made twice. */
export const RECIPE_LABEL = 'dev.platform.recipe';

/** A label of a local image, or undefined when the image or the label is absent. */
export function imageLabel(podman: Podman, reference: string, label: string): string | undefined {
  try {
    const value = podman.run(['image', 'inspect', '--format', `{{ index .Labels "${label}" }}`, reference]);
    return value && value !== '<no value>' ? value : undefined;
  } catch {
    return undefined;
  }
}
