// The fenced shell blocks of a Markdown page, with the markers that say how they run
// (docs/adr/0055-documentation-pages.md): `<!-- not run: <why> -->` on the line before the fence,
// and `# expect: <text>` lines inside the block.

/** A fence that opens a shell block; its indentation is taken off the block's lines. */
const SHELL_FENCE = /^ *`{3,}(sh|bash|shell|console)\s*$/;
/** Any opening fence: a block closes on a line of as many backticks or more (CommonMark). */
const ANY_FENCE = /^ *(`{3,})/;
const NOT_RUN = /^<!--\s*not run:(.*?)-->\s*$/;
const EXPECT = /^\s*# expect:(.*)$/;

export interface ShellBlock {
  page: string;
  /** The line of the opening fence, counted from 1. */
  line: number;
  script: string;
  /** The reason given for not running it, or null when it runs. */
  notRun: string | null;
  /** Texts that some line of its output must contain. */
  expects: string[];
}

export const whereIs = (block: ShellBlock): string => `${block.page}:${block.line}`;

/** The shell blocks of `markdown` in page order; a block of another language is skipped whole. */
export function shellBlocksOf(page: string, markdown: string): ShellBlock[] {
  const lines = markdown.split('\n');
  const blocks: ShellBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = ANY_FENCE.exec(lines[i]!);
    if (!fence) continue;
    const shell = SHELL_FENCE.test(lines[i]!);
    const indent = lines[i]!.length - lines[i]!.trimStart().length;
    const closing = new RegExp(`^\\s*\`{${fence[1]!.length},}\\s*$`);
    let end = i + 1;
    while (end < lines.length && !closing.test(lines[end]!)) end++;
    if (end === lines.length) throw new Error(`${page}:${i + 1}: a fence that is never closed`);
    if (shell) {
      const body = lines.slice(i + 1, end).map((line) => line.slice(Math.min(indent, line.length - line.trimStart().length)));
      const marker = i > 0 ? NOT_RUN.exec(lines[i - 1]!.trim()) : null;
      blocks.push({
        page,
        line: i + 1,
        script: body.join('\n'),
        notRun: marker ? marker[1]!.trim() : null,
        expects: body.flatMap((line) => EXPECT.exec(line)?.[1]?.trim() ?? []),
      });
    }
    i = end;
  }
  return blocks;
}

/** What is wrong with the markers of `blocks`: each line names the block. */
export function markerProblems(blocks: ShellBlock[]): string[] {
  return blocks.flatMap((block) => [
    ...(block.notRun === '' ? [`${whereIs(block)}: "not run" without a reason`] : []),
    ...(block.notRun !== null && block.expects.length > 0 ? [`${whereIs(block)}: "# expect:" in a block that is not run`] : []),
    ...(block.expects.some((text) => text === '') ? [`${whereIs(block)}: an empty "# expect:"`] : []),
  ]);
}

/**
 * The expected texts that no line of `output` contains.
 */
export function missingExpects(block: ShellBlock, output: string): string[] {
  const lines = output.split('\n');
  return block.expects.filter((text) => !lines.some((line) => line.includes(text)));
}
