/** Who is calling: a tenant's machine client (the Client Middleware) or one of its end users. */
export type Principal = {
  tenantId: string;
  kind: 'machine' | 'user';
  /** The access key id (machine) or the user id (user). */
  subject: string;
};
