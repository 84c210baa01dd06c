import type { Doc } from './merge.ts';

/**
 * The questionnaire every new tenant starts with (docs/default-questionnaire.md): MiFID-style sections on knowledge,
 * experience, financial situation, goals and loss tolerance. Its scores add up to at most 100; the tenant's risk
 * profiles cut that range into bands (docs/adr/0027-assessments.md). The tenant may change or delete it like any
 * questionnaire; it is found by its external_id.
 */

export const DEFAULT_QUESTIONNAIRE_EXTERNAL_ID = 'default-suitability';

type Option = [value: string, label: string, score: number];

const options = (...list: Option[]) => list.map(([value, label, score]) => ({ value, label: { en: label }, score }));

const choice = (section: string, id: string, text: string, type: 'SINGLE_CHOICE' | 'MULTIPLE_CHOICE', list: Option[]) => ({
  id,
  section,
  text: { en: text },
  type,
  required: true,
  options: options(...list),
});

export function defaultQuestionnaire(): Doc {
  return {
    external_id: DEFAULT_QUESTIONNAIRE_EXTERNAL_ID,
    name: 'Suitability (default)',
    description: 'Knowledge, experience, financial situation, goals and loss tolerance; scores 0–100.',
    validity_days: 365,
    cooldown_days: 30,
    max_attempts: 3,
    sections: [
      { id: 'knowledge', title: { en: 'Knowledge' } },
      { id: 'experience', title: { en: 'Experience' } },
      { id: 'financial_situation', title: { en: 'Financial situation' } },
      { id: 'goals', title: { en: 'Goals' } },
      { id: 'loss_tolerance', title: { en: 'Loss tolerance' } },
    ],
    questions: [
      choice('knowledge', 'products_understood', 'Which of these products do you understand well?', 'MULTIPLE_CHOICE', [
        ['SAVINGS', 'Savings accounts', 0],
        ['BONDS', 'Bonds', 2],
        ['FUNDS', 'Funds and ETFs', 3],
        ['SHARES', 'Shares', 3],
        ['DERIVATIVES', 'Options and futures', 2],
      ]),
      choice('knowledge', 'risk_and_return', 'An investment that may earn more usually…', 'SINGLE_CHOICE', [
        ['MORE_RISK', '…may also lose more', 5],
        ['LESS_RISK', '…is safer', 0],
        ['DONT_KNOW', 'I do not know', 0],
      ]),
      choice('experience', 'years_investing', 'For how long have you invested in securities?', 'SINGLE_CHOICE', [
        ['NEVER', 'Never', 0],
        ['UP_TO_3', 'Up to 3 years', 4],
        ['3_TO_10', '3 to 10 years', 8],
        ['OVER_10', 'More than 10 years', 10],
      ]),
      choice('experience', 'trades_per_year', 'How many trades do you make in a year?', 'SINGLE_CHOICE', [
        ['NONE', 'None', 0],
        ['1_TO_10', '1 to 10', 3],
        ['OVER_10', 'More than 10', 5],
      ]),
      {
        id: 'annual_income',
        section: 'financial_situation',
        text: { en: 'What is your yearly net income (in your currency)?' },
        type: 'NUMBER',
        required: true,
        minimum: 0,
        maximum: 1_000_000_000,
      },
      choice('financial_situation', 'share_of_assets', 'What share of your liquid assets will you invest here?', 'SINGLE_CHOICE', [
        ['OVER_50', 'More than half', 0],
        ['25_TO_50', 'A quarter to a half', 5],
        ['10_TO_25', 'A tenth to a quarter', 8],
        ['UNDER_10', 'Less than a tenth', 10],
      ]),
      choice('financial_situation', 'emergency_reserve', "Do you keep a reserve of at least three months' expenses?", 'SINGLE_CHOICE', [
        ['YES', 'Yes', 5],
        ['NO', 'No', 0],
      ]),
      {
        id: 'other_debts',
        section: 'financial_situation',
        text: { en: 'Do you have debts other than a mortgage?' },
        type: 'BOOLEAN',
        required: true,
      },
      choice('goals', 'goal', 'What is the main goal of this investment?', 'SINGLE_CHOICE', [
        ['PRESERVE', 'Keep its value', 0],
        ['INCOME', 'A regular income', 5],
        ['GROWTH', 'Growth over time', 10],
      ]),
      choice('goals', 'horizon', 'When will you need this money?', 'SINGLE_CHOICE', [
        ['UNDER_3', 'Within 3 years', 0],
        ['3_TO_5', 'In 3 to 5 years', 5],
        ['5_TO_10', 'In 5 to 10 years', 10],
        ['OVER_10', 'In more than 10 years', 15],
      ]),
      choice('loss_tolerance', 'loss_reaction', 'Your investment falls by 20 % in a year. What do you do?', 'SINGLE_CHOICE', [
        ['SELL_ALL', 'Sell everything', 0],
        ['SELL_SOME', 'Sell a part', 5],
        ['HOLD', 'Hold', 10],
        ['BUY_MORE', 'Buy more', 15],
      ]),
      choice('loss_tolerance', 'bearable_loss', 'What is the largest loss in a year you could bear?', 'SINGLE_CHOICE', [
        ['UP_TO_5', 'Up to 5 %', 0],
        ['UP_TO_10', 'Up to 10 %', 5],
        ['UP_TO_20', 'Up to 20 %', 10],
        ['OVER_20', 'More than 20 %', 15],
      ]),
      {
        id: 'remarks',
        section: 'goals',
        text: { en: 'Anything else your adviser should know?' },
        type: 'TEXT',
        required: false,
      },
    ],
  };
}
