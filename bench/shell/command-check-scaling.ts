/**
 * The blocked-pattern check (what `exec` runs on every command before it starts) on command texts
 * of one shape at two sizes, n and 8n, the larger at most 100,000 characters (the limit of a
 * command): the larger text's time over 8 times the smaller's. 1 means linear; ~8, a cost that
 * grows with the square of the text. Each time is the best of `rounds`, in this process. Target:
 * <= 3 for every shape: texts that make tens of thousands of commands keep them all alive through
 * the check, and each costs more in a larger live set (GC, caches: `a;` repeated costs 360 ns a
 * command at 1,000 commands, 1,400 ns at 49,000), so linear shapes show up to ~2. Found this way: a pipeline's members were copied per member (`a|a|…`,
 * 50,000 members, held the worker past its liveness check), and each `;` walked every
 * here-document opened on its line (`<<A;` 25,000 times: 1.0 s).
 *   npx tsx bench/shell/command-check-scaling.ts [rounds, default 5]
 */
import { findBlockedPattern } from '../../workers/shell/blocked-patterns';

const SHAPES: Record<string, (n: number) => string> = {
  'commands after `;`': (n) => 'a;'.repeat(n),
  'commands after `&&`': (n) => 'a && '.repeat(n),
  'pipeline members': (n) => 'a|'.repeat(n),
  'here-documents on one line': (n) => '<<A;'.repeat(n),
  'lines of a here-document fed to sh': (n) => `sh <<A\n${'x\n'.repeat(n)}A\n`,
  'quoted words': (n) => '"a" \'b\' '.repeat(n),
  'command substitutions': (n) => '$(a)'.repeat(n),
  'nested substitutions': (n) => `${'$('.repeat(n)}${')'.repeat(n)}`,
  backticks: (n) => '`a`'.repeat(n),
  'sh -c in sh -c': (n) => `sh -c "sh -c 'sh -c ${'a;'.repeat(n)}'"`,
  'echo … | sh, many': (n) => 'echo a | sh;'.repeat(n),
  'wrappers (sudo sudo … ls)': (n) => `${'sudo '.repeat(n)}ls`,
  'rm operands': (n) => `rm -rf ${'x '.repeat(n)}`,
  redirections: (n) => '>a '.repeat(n),
};

function best(command: string, rounds: number): number {
  let fastest = Infinity;
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    findBlockedPattern(command);
    fastest = Math.min(fastest, performance.now() - started);
  }
  return fastest;
}

function main(): void {
  const rounds = Number(process.argv[2] ?? 5);
  best('ls -la; echo $(date) | sh', 50); // warm-up
  let worst = 0;
  for (const [name, shape] of Object.entries(SHAPES)) {
    // The largest n whose 8n text fits in a command.
    let n = 1;
    while (shape(16 * n).length <= 100_000) n *= 2;
    const small = best(shape(n), rounds);
    const large = best(shape(8 * n), rounds);
    const ratio = large / (8 * small);
    worst = Math.max(worst, ratio);
    console.log(`${name}: n=${n} ${small.toFixed(2)} ms, 8n (${shape(8 * n).length} characters) ${large.toFixed(2)} ms; 8n / (8 x n) = ${ratio.toFixed(2)}`);
  }
  console.log(`worst shape: ${worst.toFixed(2)} (target <= 3)`);
}

main();
