import { tempDir } from '../helpers/temp';

// Servers the tests start keep the shell sandbox's home under XDG_STATE_HOME (else
// ~/.local/state): each test file gets its own, removed after it, so no run leaves directories in
// the home of the user who ran the tests. Tests that need another set theirs.
process.env.XDG_STATE_HOME = tempDir('mcpvisor-state-');
