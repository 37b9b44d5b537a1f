import { referenceArgv } from '../../../supervisor/cli/reference-argv';
import { openapiProfile } from '../../../supervisor/cli/openapi-mcp-server';
import { COMMON_FLAGS } from '../../../supervisor/profile';

const FLAGS = [...COMMON_FLAGS, ...openapiProfile().flags];

describe("the reference's command-line forms, as our parser reads them", () => {
  test.each([
    { given: ['-u', 'https://a.example', '-s', './s.yaml', '-H', 'A:1', '-t', 'http', '-p', '8080', '-n', 'x'], want: ['--api-base-url', 'https://a.example', '--openapi-spec', './s.yaml', '--headers', 'A:1', '--transport', 'http', '--port', '8080', '--name', 'x'] },
    { given: ['--disable-abbreviation', 'true', '--debug', 'false'], want: ['--disable-abbreviation'] },
    { given: ['--disable-abbreviation=yes', '--debug=0'], want: ['--disable-abbreviation'] },
    // No boolean word: left for the parser to refuse in its own words.
    { given: ['--debug=maybe'], want: ['--debug=maybe'] },
    { given: ['--disable-abbreviation', '--tag', 'true'], want: ['--disable-abbreviation', '--tag', 'true'] },
    { given: ['--verbose'], want: ['--verbose', 'true'] },
    { given: ['--verbose', '--debug'], want: ['--verbose', 'true', '--debug'] },
    { given: ['--verbose', 'false'], want: ['--verbose', 'false'] },
    { given: ['--spec-inline', '---\nopenapi: 3.0.3'], want: ['--spec-inline=---\nopenapi: 3.0.3'] },
    // A flag where a value was due stays a flag: the parser says the value is missing.
    { given: ['--api-base-url', '--openapi-spec', 'x'], want: ['--api-base-url', '--openapi-spec', 'x'] },
    { given: ['--api-base-url', '-s', 'x'], want: ['--api-base-url', '--openapi-spec', 'x'] },
    { given: ['-v', '--', '-u'], want: ['-v', '--', '-u'] },
  ])('$given → $want', ({ given, want }) => {
    expect(referenceArgv(given, FLAGS, ['verbose'])).toEqual(want);
  });
});
