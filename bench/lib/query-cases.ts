// The queries bench:queries sends GET /portfolios/ and, for each, the statements a developer would
// write by hand for the same answer.

/** Hand-written SQL: the statements a developer would send for the same answer, one after another. */
export type Case = {
  name: string;
  query: (n: number) => string;
  embed?: string;
  sql: (n: number) => { text: string; values: unknown[] }[];
  indexed: boolean;
  /** A lookup whose throughput is measured as well. */
  throughput?: boolean;
};

/** The four queries of the interface and their hand-written SQL, over the seed's tenant and sizes. */
export function queryCases(tenant: string, portfolios: number, users: number): Case[] {
  const user = (n: number) => `U${(Math.abs(n) % users) + 1}`;
  return [
    {
      name: 'external_id lookup',
      query: (n) => `external_id eq 'ext-${(n % portfolios) + 1}'`,
      sql: (n) => [
        {
          text: `select doc from entities where tenant_id = $1 and type = 'portfolios' and external_id = $2 and not deleted`,
          values: [tenant, `ext-${(n % portfolios) + 1}`],
        },
      ],
      indexed: true,
      throughput: true,
    },
    {
      name: 'pending withdrawals',
      query: () => 'config.manager_settings.divest_amount neq 0 and config.manager_settings.divest_amount neq null',
      sql: () => {
        const where = `tenant_id = $1 and type = 'portfolios' and not deleted
              and platform_numeric(doc, '{config,manager_settings,divest_amount}') is not null
              and platform_numeric(doc, '{config,manager_settings,divest_amount}') <> 0`;
        return [
          { text: `select count(*) from entities where ${where}`, values: [tenant] },
          { text: `select doc from entities where ${where} order by id limit 20`, values: [tenant] },
        ];
      },
      indexed: true,
    },
    {
      name: 'owner lookup + embed owner',
      query: (n) => `owned_by_user_id eq '{${user(n)}}'`,
      embed: 'owned_by_user_id',
      sql: (n) => {
        const where = `tenant_id = $1 and type = 'portfolios' and not deleted and platform_text(doc, '{owned_by_user_id}') = $2`;
        return [
          { text: `select count(*) from entities where ${where}`, values: [tenant, `{${user(n)}}`] },
          { text: `select doc from entities where ${where} order by id limit 20`, values: [tenant, `{${user(n)}}`] },
          { text: `select doc from entities where tenant_id = $1 and id = $2`, values: [tenant, `{${user(n)}}`] },
        ];
      },
      indexed: true,
      throughput: true,
    },
    {
      name: '3-clause and/or + orderby',
      query: () => "(base_currency eq 'EUR' or base_currency eq 'CHF') and config.manager eq 'ROBO_ADVISOR_DISCRETIONARY' orderby name desc",
      sql: () => {
        const where = `tenant_id = $1 and type = 'portfolios' and not deleted
              and (doc ->> 'base_currency' = 'EUR' or doc ->> 'base_currency' = 'CHF') and doc -> 'config' ->> 'manager' = 'ROBO_ADVISOR_DISCRETIONARY'`;
        return [
          { text: `select count(*) from entities where ${where}`, values: [tenant] },
          { text: `select doc from entities where ${where} order by doc ->> 'name' desc, id limit 20`, values: [tenant] },
        ];
      },
      indexed: false,
    },
  ];
}
