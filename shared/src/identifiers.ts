/**
 * What an identifier (an `external_id`, an e-mail address) may hold, and its one stored form
 * (docs/adr/0040-identifiers-as-people-read-them.md): text a person reads the same way is one
 * identifier, and text that only looks like another one is refused rather than kept apart.
 */

export type IdentifierCheck = { ok: true; value: string } | { ok: false; msg: string; type: string };

const codePoint = (ch: string) => `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

// Control (Cc), format (Cf: zero-width space, joiners, BOM, bidi controls), line and paragraph
// separators, other default-ignorable characters (fillers, variation selectors), private use and
// unassigned code points: none of them shows, so two ids differing by one look alike.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Co}\p{Cn}]/u;
const SPACE_AT_END = /^\s|\s$/u;
// Inside an identifier only the plain space; the other spaces look the same and are refused.
const OTHER_SPACE = /[^\S ]/u;
const ASCII = /^[\x20-\x7E]*$/;

/**
 * The identifier in its stored form (NFC), or why it is refused: invisible or control characters,
 * white space at either end, compatibility characters that NFKC would change (fullwidth letters,
 * ligatures, superscripts, other spaces), and letters of scripts that are not used together.
 */
export function checkIdentifier(raw: string): IdentifierCheck {
  if (SPACE_AT_END.test(raw)) {
    const at = /^\s/u.test(raw) ? 0 : raw.length - 1;
    return { ok: false, msg: `must not start or end with white space (${codePoint(raw[at]!)} at character ${at})`, type: 'identifier' };
  }
  if (ASCII.test(raw)) return { ok: true, value: raw };
  const invisible = raw.search(INVISIBLE);
  if (invisible >= 0) {
    return {
      ok: false,
      msg: `must not contain the invisible or control character ${codePoint(String.fromCodePoint(raw.codePointAt(invisible)!))}, found at character ${invisible}`,
      type: 'identifier',
    };
  }
  const space = raw.search(OTHER_SPACE);
  if (space >= 0)
    return { ok: false, msg: `must not contain the space ${codePoint(raw[space]!)} (only U+0020), found at character ${space}`, type: 'identifier' };
  const value = raw.normalize('NFC');
  const compatibility = firstCompatibilityCharacter(value);
  if (compatibility) return { ok: false, msg: compatibility, type: 'identifier' };
  const mixed = mixedScripts(value);
  if (mixed) return { ok: false, msg: mixed, type: 'identifier' };
  return { ok: true, value };
}

/** The message for the first character NFKC would replace (`ｃ` by `c`, `ﬁ` by `fi`), if any. */
function firstCompatibilityCharacter(nfc: string): string | undefined {
  if (nfc.normalize('NFKC') === nfc) return undefined;
  let at = 0;
  for (const ch of nfc) {
    const folded = ch.normalize('NFKC');
    if (folded !== ch) {
      return `must not contain the compatibility character '${ch}' (${codePoint(ch)}) at character ${at}; send '${folded}' instead`;
    }
    at += ch.length;
  }
  // Only a sequence changes (never seen in practice); still refused, without a single culprit.
  return 'must not contain compatibility characters (the text changes under Unicode NFKC normalisation)';
}

// Every script of Unicode 15.1 by its ISO 15924 code; a character's Script_Extensions are those it matches.
const SCRIPT_CODES =
  'Adlm Aghb Ahom Arab Armi Armn Avst Bali Bamu Bass Batk Beng Bhks Bopo Brah Brai Bugi Buhd Cakm Cans Cari Cham Cher Chrs Copt Cpmn Cprt Cyrl Deva Diak Dogr Dsrt Dupl Egyp Elba Elym Ethi Geor Glag Gong Gonm Goth Gran Grek Gujr Guru Hang Hani Hano Hatr Hebr Hira Hluw Hmng Hmnp Hung Ital Java Kali Kana Kawi Khar Khmr Khoj Kits Knda Kthi Lana Laoo Latn Lepc Limb Lina Linb Lisu Lyci Lydi Mahj Maka Mand Mani Marc Medf Mend Merc Mero Mlym Modi Mong Mroo Mtei Mult Mymr Nagm Nand Narb Nbat Newa Nkoo Nshu Ogam Olck Orkh Orya Osge Osma Ougr Palm Pauc Perm Phag Phli Phlp Phnx Plrd Prti Rjng Rohg Runr Samr Sarb Saur Sgnw Shaw Shrd Sidd Sind Sinh Sogd Sogo Sora Soyo Sund Sylo Syrc Tagb Takr Tale Talu Taml Tang Tavt Telu Tfng Tglg Thaa Thai Tibt Tirh Tnsa Toto Ugar Vaii Vith Wara Wcho Xpeo Xsux Yezi Yiii Zanb'.split(
    ' ',
  );
const scx = (code: string) => new RegExp(`\\p{scx=${code}}`, 'u');
const SCRIPTS = SCRIPT_CODES.map((code) => ({ code, re: scx(code) }));
// A character's Script_Extensions are its Script alone unless it is in this class (mostly shared
// punctuation and marks): one test instead of one per script for nearly every letter.
const EXTENDED = new RegExp(`[${SCRIPT_CODES.map((c) => `[\\p{scx=${c}}--\\p{sc=${c}}]`).join('')}]`, 'v');
const LIKELY_FIRST = ['Latn', 'Cyrl', 'Grek', 'Hani', 'Hira', 'Kana', 'Hang', 'Arab', 'Hebr', 'Deva', 'Thai', 'Armn', 'Geor'];
const BY_SCRIPT = [...LIKELY_FIRST, ...SCRIPT_CODES.filter((c) => !LIKELY_FIRST.includes(c))].map((code) => ({
  code,
  re: new RegExp(`\\p{sc=${code}}`, 'u'),
}));
const NAMES: Record<string, string> = { Latn: 'Latin', Cyrl: 'Cyrillic', Grek: 'Greek', Armn: 'Armenian', Hebr: 'Hebrew', Arab: 'Arabic', Cher: 'Cherokee' };
const scriptName = (code: string) => NAMES[code] ?? code;

// Writing systems that mix scripts (UTS #39 "augmented script sets"): Japanese, Korean, Chinese with Bopomofo.
const AUGMENT: Record<string, string[]> = { Hani: ['Hanb', 'Jpan', 'Kore'], Hira: ['Jpan'], Kana: ['Jpan'], Hang: ['Kore'], Bopo: ['Hanb'] };
const CJK = ['Jpan', 'Kore', 'Hanb'];

/** The scripts a character belongs to (augmented), or undefined for digits, punctuation and marks, which go with any script. */
function scriptsOf(ch: string): Set<string> | undefined {
  if (ch < '\x80') return /[A-Za-z]/.test(ch) ? new Set(['Latn']) : undefined;
  let codes: string[];
  if (EXTENDED.test(ch)) codes = SCRIPTS.filter((s) => s.re.test(ch)).map((s) => s.code);
  else {
    const script = BY_SCRIPT.find((s) => s.re.test(ch));
    codes = script ? [script.code] : [];
  }
  if (codes.length === 0) return undefined;
  return new Set(codes.flatMap((c) => [c, ...(AUGMENT[c] ?? [])]));
}

const intersect = (a: Set<string>, b: Set<string>) => new Set([...a].filter((x) => b.has(x)));

/**
 * Why the identifier mixes scripts, if it does: its letters must share one script (UTS #39
 * "highly restrictive"), or be Latin together with Japanese, Korean or Chinese. A Cyrillic `с`
 * among Latin letters is refused; `crm-東京` is not.
 */
function mixedScripts(nfc: string): string | undefined {
  let all: Set<string> | undefined;
  let nonLatin: Set<string> | undefined;
  let first: { ch: string; scripts: Set<string> } | undefined;
  for (const ch of nfc) {
    const scripts = scriptsOf(ch);
    if (!scripts) continue;
    first ??= { ch, scripts };
    all = all ? intersect(all, scripts) : scripts;
    if (!scripts.has('Latn')) nonLatin = nonLatin ? intersect(nonLatin, scripts) : scripts;
    if (all.size > 0 || (nonLatin && CJK.some((s) => nonLatin!.has(s)))) continue;
    const theirs = [...first.scripts].filter((s) => !scripts.has(s))[0] ?? [...first.scripts][0]!;
    const its = [...scripts][0]!;
    return `must not mix scripts: ${scriptName(theirs)} '${first.ch}' (${codePoint(first.ch)}) with ${scriptName(its)} '${ch}' (${codePoint(ch)})`;
  }
  return undefined;
}

/** E-mail addresses are compared without regard to case (stored as sent). */
export const emailKey = (email: string): string => email.toLowerCase();
