import { fileURLToPath } from 'node:url';

const folder = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

/**
 * The folders whose numbered SQL files make up the one Postgres database, each owned by the package
 * that uses its tables: the shared package (Idempotency-Keys), the management service (tenants,
 * credentials, entities, outbox, funding, tokens) and the data service (tenant data). One migrate
 * command applies them together, ordered by file name across folders (docs/architecture.md).
 */
export const migrationFolders: readonly string[] = [
  folder('../migrations/'),
  folder('../../management-service/migrations/'),
  folder('../../data-service/migrations/'),
];
