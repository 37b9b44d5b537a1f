/**
 * Where each configured value came from, so that a message names it in the words the user used:
 * the flag (`--api-base-url`), the environment variable (`API_BASE_URL`) or the config file and
 * its key (`apis[0].apiBaseUrl in /etc/mcpvisor.yaml`). A value nobody gave (a default, or one
 * missing) is named by its key, with the flags and variables that could give it.
 */
export class Origins {
  /** Dotted path (`apis.0.apiBaseUrl`) → who set it: `--flag`, `VARIABLE` or `file:<path>`. */
  #set = new Map<string, string>();
  /** Dotted path → the flags and variables that can set it, for a value that is missing. */
  #givers = new Map<string, string[]>();

  /** `by` (`--port`, `MCPVISOR_PORT`) gave `dotted`; what a lower layer gave below it is replaced. */
  set(dotted: string, by: string): void {
    for (const key of [...this.#set.keys()]) if (key.startsWith(`${dotted}.`)) this.#set.delete(key);
    this.#set.set(dotted, by);
  }

  /** A config file gave `value` at `prefix` (every object, array item and leaf below it). */
  setTree(prefix: string[], value: unknown, file: string): void {
    if (prefix.length > 0) this.set(prefix.join('.'), `file:${file}`);
    if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) this.setTree([...prefix, key], inner, file);
    }
  }

  /** `name` (a flag or variable) can set `dotted`. */
  canGive(dotted: string, name: string): void {
    this.#givers.set(dotted, [...(this.#givers.get(dotted) ?? []), name]);
  }

  /**
   * The key at `path` as the user would name it: `--port (http.port)`, `PORT_VAR (http.port)`,
   * `apis[0].openApiSpec in /etc/c.yaml`, or the key alone when no one gave it (the nearest
   * ancestor that was given decides: a file's `apis[1]` names the file for its missing keys).
   */
  name(path: readonly PropertyKey[]): string {
    const key = userKey(path);
    for (let i = path.length; i > 0; i--) {
      const by = this.#set.get(path.slice(0, i).map(String).join('.'));
      if (by === undefined) continue;
      if (by.startsWith('file:')) return `${key} in ${by.slice(5)}`;
      return i === path.length ? `${by} (${key})` : `${key} (under ${by})`;
    }
    return key;
  }

  /** For a missing value: `; give it with --api-base-url or API_BASE_URL`, else ''. */
  hint(path: readonly PropertyKey[]): string {
    const givers = this.#givers.get(path.map(String).join('.'));
    return givers && givers.length > 0 ? `; give it with ${givers.join(' or ')}` : '';
  }
}

/** `apis.0.apiBaseUrl` as a config file writes it: `apis[0].apiBaseUrl`. */
export function userKey(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number' || /^\d+$/.test(String(part))) out += `[${String(part)}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(top level)' : out;
}
