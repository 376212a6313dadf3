import { readFileSync } from 'node:fs';

/** One fenced code block of a Markdown file, with the `<!-- readme: … -->` directives above it. */
export interface Block {
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  /** `<!-- readme: run -->`: a self-contained program, run as well as type-checked. */
  readonly run: boolean;
  /** `<!-- readme: prelude … -->`: declarations the block assumes (type-checked with it, not shown). */
  readonly prelude: string;
  /** `<!-- readme: output ebb … -->`: the command whose stdout must contain this block verbatim. */
  readonly output?: readonly string[];
  /**
   * `<!-- readme: pending … -->`: the block uses a 1.0 name that is landing on another branch
   * (the text says which); it is checked on its own, so that its failure names it.
   */
  readonly pending?: string;
}

const DIRECTIVE = /^<!-- readme: (run|prelude|output|pending)(?: (.*?))? -->$/;

/**
 * Every fenced block of `file`. Directives apply to the next block; blank lines may separate
 * them. Unknown directives and unterminated fences throw, so a typo cannot switch a check off.
 */
export function blocksOf(file: string): Block[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const blocks: Block[] = [];
  let pending: { run: boolean; prelude: string[]; output?: string[]; pending?: string } = {
    run: false,
    prelude: [],
  };
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i] as string;
    if (text.startsWith('<!-- readme:')) {
      const m = DIRECTIVE.exec(text.trim());
      if (!m) throw new Error(`${file}:${i + 1}: unknown readme directive: ${text}`);
      if (m[1] === 'run') pending.run = true;
      else if (m[1] === 'prelude') pending.prelude.push(m[2] ?? '');
      else if (m[1] === 'pending') pending.pending = m[2] ?? 'a name landing elsewhere';
      else pending.output = (m[2] ?? '').split(/\s+/).filter(Boolean);
      continue;
    }
    const fence = /^```(\w*)\s*$/.exec(text);
    if (!fence) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] as string); i++) body.push(lines[i] as string);
    if (i >= lines.length) throw new Error(`${file}:${start + 1}: unterminated code block`);
    blocks.push({
      file,
      line: start + 1,
      lang: fence[1] ?? '',
      code: `${body.join('\n')}\n`,
      run: pending.run,
      prelude: pending.prelude.join('\n'),
      ...(pending.output ? { output: pending.output } : {}),
      ...(pending.pending ? { pending: pending.pending } : {}),
    });
    pending = { run: false, prelude: [] };
  }
  return blocks;
}

/**
 * The `npx ebb …` commands of a shell block, as argument lists: `\` continuations joined,
 * comments dropped, `a && b` split. Lines of other programs (npm, node) are not returned.
 */
export function ebbCommands(code: string): string[][] {
  const joined = code.replace(/\\\n\s*/g, ' ');
  const commands: string[][] = [];
  for (const line of joined.split('\n')) {
    const withoutComment = line.replace(/(^|\s)#.*$/, '');
    for (const part of withoutComment.split('&&')) {
      const words = part.trim().split(/\s+/).filter(Boolean);
      if (words[0] === 'npx' && words[1] === 'ebb') commands.push(words.slice(2));
    }
  }
  return commands;
}
