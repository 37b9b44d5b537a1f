import { descriptorProblem } from './descriptor-check';
import { McpvisorError } from './errors';
import type { ToolDescriptor } from './tool';

/**
 * Tool descriptors as JSON text, and where each one is in it: how a worker with a large tool list
 * announces it. Why: GitHub's 1,226 descriptors are 1.7 MB of JSON; as objects they were built
 * in the worker, serialised for IPC (~55 ms of startup with the parse at the other end), parsed
 * in the supervisor and serialised again for tools/list. As text they pass through
 * the supervisor into tools/list untouched (supervisor/wire.ts), and a descriptor is parsed only
 * when something reads it (the first call's argument validation).
 */
export interface ToolTexts {
  /** The descriptors, comma-separated: the inside of a JSON array. ASCII only (asciiJson). */
  text: string;
  names: string[];
  /** Per tool, where its descriptor starts and ends in `text`: [start0, end0, start1, end1, …]. */
  spans: number[];
}

/** A tool as a pool announced it: its name and descriptor text, parsed on first use. */
export class AnnouncedTool {
  #descriptor: ToolDescriptor | undefined;

  constructor(
    readonly name: string,
    /** The descriptor's JSON text; it starts with `{"name":` and its name as asciiJson writes it. */
    readonly json: string,
    descriptor?: ToolDescriptor,
  ) {
    this.#descriptor = descriptor;
  }

  static of(descriptor: ToolDescriptor): AnnouncedTool {
    const { name, ...rest } = descriptor;
    return new AnnouncedTool(name, asciiJson({ name, ...rest }), descriptor);
  }

  get descriptor(): ToolDescriptor {
    return (this.#descriptor ??= JSON.parse(this.json) as ToolDescriptor);
  }

  /** The same tool under another name (a namespace prefix), its text edited, not re-serialised. */
  renamed(name: string): AnnouncedTool {
    const head = `{"name":${asciiJson(this.name)}`;
    const json = `{"name":${asciiJson(name)}${this.json.slice(head.length)}`;
    return new AnnouncedTool(name, json, this.#descriptor && { ...this.#descriptor, name });
  }
}

/** JSON.stringify with every character above U+007F escaped: the text is one byte a character in V8. */
export function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The tools a worker announced, as objects or as text, checked: a malformed list, or a descriptor
 * object MCP clients refuse (descriptor-check.ts), is BAD_INPUT.
 */
export function announcedTools(tools: ToolDescriptor[] | ToolTexts): AnnouncedTool[] {
  if (Array.isArray(tools)) {
    tools.forEach((tool, i) => {
      const problem = descriptorProblem(tool);
      const name = typeof (tool as { name?: unknown } | null)?.name === 'string' ? tool.name : '?';
      if (problem) throw new McpvisorError('BAD_INPUT', `the worker announced a tool MCP clients refuse (tool ${i}, '${name}'): ${problem}; the SDK client refuses the whole tools/list for it`);
    });
    return tools.map((tool) => AnnouncedTool.of(tool));
  }
  const { text, names, spans } = tools;
  if (typeof text !== 'string' || !Array.isArray(names) || !Array.isArray(spans) || spans.length !== names.length * 2) {
    throw new McpvisorError('BAD_INPUT', 'the worker announced a malformed tool list');
  }
  const out: AnnouncedTool[] = [];
  let previousEnd = 0;
  for (let i = 0; i < names.length; i++) {
    const [start, end] = [spans[2 * i], spans[2 * i + 1]];
    const head = typeof names[i] === 'string' ? `{"name":${asciiJson(names[i])}` : '\0';
    // In order, inside the text, and each starting with its own name: renamed() relies on it.
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < previousEnd || end > text.length || end <= start || !text.startsWith(head, start)) {
      throw new McpvisorError('BAD_INPUT', `the worker announced a malformed tool list (tool ${i}, '${String(names[i])}')`);
    }
    previousEnd = end;
    out.push(new AnnouncedTool(names[i], text.slice(start, end)));
  }
  return out;
}

/** Collects descriptor texts into one ToolTexts (a worker's side). */
export class ToolTextsBuilder {
  #parts: string[] = [];
  #length = 0;
  #names: string[] = [];
  #spans: number[] = [];

  /** Adds one descriptor's text, which must start with `{"name":` and its name as asciiJson writes it. */
  add(name: string, json: string): void {
    if (this.#parts.length > 0) {
      this.#parts.push(',');
      this.#length += 1;
    }
    this.#spans.push(this.#length, this.#length + json.length);
    this.#names.push(name);
    this.#parts.push(json);
    this.#length += json.length;
  }

  build(): ToolTexts {
    return { text: this.#parts.join(''), names: this.#names, spans: this.#spans };
  }
}
