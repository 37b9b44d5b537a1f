import { helpText, SERVER_FLAGS, type Profile } from '../../../supervisor/profile';

const profile = { command: 'mcpvisor', summary: 'test', flags: [], envVars: [], defaults: {} } as unknown as Profile;

describe('--help', () => {
  it("starts every flag's help at one column, also a flag longer than the column, whose help is on the next line", () => {
    const lines = helpText(profile, SERVER_FLAGS).split('\n');
    const column = lines.find((line) => line.startsWith('  --port '))!.indexOf('HTTP port');
    expect(column).toBeGreaterThan(10);
    for (const flag of SERVER_FLAGS) {
      const at = lines.findIndex((line) => line.includes(flag.help));
      expect([flag.name, lines[at].indexOf(flag.help)]).toEqual([flag.name, column]);
      const flagLine = lines.findIndex((line) => line.startsWith(`  --${flag.name}`));
      expect(flagLine === at || flagLine === at - 1).toBe(true);
    }
    expect(lines).toContain('  --dangerously-allow-unauthenticated-network');
  });
});

describe('openapi-mcp-server --help', () => {
  it("names the reference's one-letter flags it reads, each with its long flag (README names them; --help did not)", () => {
    const { openapiProfile } = require('../../../supervisor/cli/openapi-mcp-server') as typeof import('../../../supervisor/cli/openapi-mcp-server');
    const { referenceArgv } = require('../../../supervisor/cli/reference-argv') as typeof import('../../../supervisor/cli/reference-argv');
    const profile = openapiProfile();
    const help = helpText(profile, [...SERVER_FLAGS, ...profile.flags]);
    const pairs: Array<[string, string]> = [['-u', '--api-base-url'], ['-s', '--openapi-spec'], ['-H', '--headers'], ['-t', '--transport'], ['-p', '--port'], ['-n', '--name']];
    for (const [short, long] of pairs) {
      expect(referenceArgv([short, 'x'], profile.flags)).toEqual([long, 'x']);
      expect(help).toContain(`${short} ${long}`);
    }
  });
});
