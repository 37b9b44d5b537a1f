#!/usr/bin/env node
// Placeholder until its toolset is built: says so and exits non-zero.
process.stderr.write('web-search: this command is not built yet\n');
process.exitCode = 1;
