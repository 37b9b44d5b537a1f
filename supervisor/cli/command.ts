import path from 'node:path';

/**
 * Whether this process was started as the command `name` (package.json `bin`). Not
 * `require.main === module`: each server command's file is a launcher that loads a bundle of its
 * module (scripts/bundle.js), and a module inlined in a bundle sees the bundle as `module`.
 */
export function isCommand(name: string): boolean {
  const main = require.main?.filename;
  return main !== undefined && path.basename(main) === `${name}.js`;
}
