import { createHash } from 'node:crypto';
import { dedupeToolNames, generateToolName, isValidToolName, toolNameSource } from '../../../workers/openapi/tool-name';

const hash = (text: string, n: number) => createHash('sha256').update(text).digest('hex').slice(0, n);

describe('generateToolName', () => {
  const table: Array<{ given: string; want: string }> = [
    // The examples of OPENAPI-NAMING.md.
    { given: 'getUserById', want: 'get-usr-by-id' },
    { given: 'ApiControllerGetApplicationVersionsHandler', want: 'get-app-versions' },
    { given: 'list_repository_values_for_the_account', want: 'lst-repo-vals-acct' },
    { given: 'exportReportAsPDF2024', want: 'export-report-as-pdf2024' },
    { given: 'List all the things in the inventory', want: 'list-all-the-things-in-the-inventory' },
    { given: 'DELETE /widgets/{widgetId}', want: 'delete-widgets-widget-id' },
    // More of the pipeline.
    { given: 'get-item-by-id', want: 'get-item-by-id' },
    { given: 'createUserManagementService', want: 'crt-usr-mgmt-svc' },
    { given: 'repos/create-for-authenticated-user', want: 'repos-create-for-authenticated-user' },
    { given: 'getHTTPResponse', want: 'get-http-resp' },
    { given: '   ', want: 'unnamed-tool' },
    { given: '', want: 'unnamed-tool' },
    { given: '!!!', want: `tool-${hash('!!!', 8)}` },
  ];
  test.each(table)('names $given as $want', ({ given, want }) => {
    expect(generateToolName(given)).toBe(want);
  });

  test('removes vowels of long words and appends a 4-character hash when the source is over 64 characters', () => {
    const source = 'retrieveAllConfigurationDocumentsForTheSpecifiedOrganizationalUnitAndEnvironmentIncludingDeprecatedOnes';
    const name = generateToolName(source);
    expect(name.length).toBeLessThanOrEqual(64);
    expect(name.endsWith(`-${hash(source, 4)}`)).toBe(true);
    expect(name).toBe('all-config-docs-spcfd-orgnztnl-unit-envrnmnt-incldng-depr-o-57f2');
    expect(isValidToolName(name)).toBe(true);
  });

  test('keeps every word and does not split at digits with disableAbbreviation', () => {
    expect(generateToolName('getUserById', true)).toBe('get-user-by-id');
    expect(generateToolName('getWeb3Wallet', true)).toBe('get-web3-wallet');
    expect(generateToolName('getWeb3Wallet')).toBe('get-web-3-wallet');
    const long = 'a'.repeat(40) + 'ControllerThing' + 'b'.repeat(40);
    expect(generateToolName(long, true).length).toBeGreaterThan(64);
  });

  test('honours a smaller maximum length (room for a namespace prefix)', () => {
    const name = generateToolName('listRepositoryValuesForTheAccountIncludingArchivedOnesAndMore', false, 40);
    expect(name.length).toBeLessThanOrEqual(40);
  });
});

describe('isValidToolName', () => {
  test.each([
    ['get-usr', true],
    ['a'.repeat(64), true],
    ['a'.repeat(65), false],
    ['Get-Usr', false],
    ['get_usr', false],
    ['', false],
  ])('%s is %s', (name, want) => {
    expect(isValidToolName(name)).toBe(want);
  });
});

describe('toolNameSource', () => {
  test('prefers operationId, then summary, then METHOD and path', () => {
    expect(toolNameSource('get', '/a', { operationId: 'op', summary: 's' })).toBe('op');
    expect(toolNameSource('get', '/a', { summary: 's' })).toBe('s');
    expect(toolNameSource('get', '/a/{b}', {})).toBe('GET /a/{b}');
  });
});

describe('dedupeToolNames', () => {
  test('keeps the first name and suffixes later ones deterministically', () => {
    const { names, renamed } = dedupeToolNames(['get-usrs', 'get-usrs', 'get-usrs', 'get-usrs-2']);
    expect(names).toEqual(['get-usrs', 'get-usrs-3', 'get-usrs-4', 'get-usrs-2']);
    expect(renamed.map((r) => r.index)).toEqual([1, 2]);
  });

  test('stays within the maximum length', () => {
    const long = 'x'.repeat(64);
    const { names } = dedupeToolNames([long, long]);
    expect(names[1]).toHaveLength(64);
    expect(names[1].endsWith('-2')).toBe(true);
    expect(new Set(names).size).toBe(2);
  });
});
