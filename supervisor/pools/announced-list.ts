import { McpvisorError } from '../../protocol/errors';
import type { ToolDescriptor } from '../../protocol/tool';
import { announcedTools, type AnnouncedTool, type ToolTexts } from '../../protocol/tool-text';

/**
 * The tool list a process pool serves: its first worker's, which every later worker (a
 * replacement) must announce again, word for word.
 */
export class AnnouncedList {
  readonly #pool: string;
  #tools: AnnouncedTool[] = [];
  /** The first worker's list as text. */
  #text: string | undefined;
  /** The last replacement was refused for announcing other tools: only a restart of the server helps. */
  refused = false;

  constructor(pool: string) {
    this.#pool = pool;
  }

  get tools(): readonly AnnouncedTool[] {
    return this.#tools;
  }

  /**
   * Takes a worker's list; throws McpvisorError when the worker is not fit to serve: a first list
   * it could not have built, or a replacement's list that differs.
   */
  accept(tools: ToolDescriptor[] | ToolTexts): void {
    if (this.#text === undefined) {
      this.#tools = announcedTools(tools);
      this.#text = textOf(tools);
    } else if (textOf(tools) !== this.#text) {
      // A replacement built from a description (or module) changed since the start: beside the
      // workers and the list clients have, the same call would reach two endpoints.
      this.refused = true;
      throw new McpvisorError(
        'POOL_UNAVAILABLE',
        `a new worker of ${this.#pool} announced other tools than the pool started with: its description or module changed since the server started; restart the server to serve the new one`,
      );
    }
    this.refused = false;
  }
}

function textOf(tools: ToolDescriptor[] | ToolTexts): string {
  return Array.isArray(tools) ? JSON.stringify(tools) : tools.text;
}
