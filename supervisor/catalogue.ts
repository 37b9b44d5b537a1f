import type { ErrorObject, ValidateFunction } from 'ajv';
import type { default as Ajv } from 'ajv/dist/2020';
import { McpvisorError } from '../protocol/errors';
import { lenientRegExp } from '../protocol/lenient-regexp';
import type { Pool, PoolCallOptions } from '../protocol/pool';
import { errorResult } from '../protocol/results';
import { closestErrors, joinProblems } from '../protocol/schema-errors';
import { addSafeIntegerKeyword, SAFE_INTEGER_KEYWORD, typeText, unsafeIntegerText, withSafeIntegers } from '../protocol/argument-values';
import type { JsonObjectSchema, ToolDescriptor, ToolResult } from '../protocol/tool';
import { givenArgumentsSchema, isWideSchema } from '../protocol/wide-schemas';
import type { AroundCall, BeforeCall } from './toolsets/types';
import type { AnnouncedTool } from '../protocol/tool-text';
import { preserialized } from './preserialized';
import { resultProblem } from './result-check';
import { oversizeBytes, sizeText } from './result-size';

/** MCP 2025-11-25's advice for tool names (server/tools#tool-names). */
const PORTABLE_TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

interface Entry {
  /** The tool as clients see it (namespaced name). */
  tool: AnnouncedTool;
  /** The name the worker knows it by. */
  workerName: string;
  /** The toolset's namespace, when it has one. */
  namespace?: string;
  pool: Pool;
  callTimeoutMs: number;
  beforeCall?: BeforeCall;
  aroundCall?: AroundCall;
  validate?: ValidateFunction;
  /** The same schema with allErrors, compiled when `validate` first refuses (for the message). */
  validateAll?: ValidateFunction;
  /** The tool's outputSchema, compiled on its first result with structuredContent. */
  validateOutput?: ValidateFunction;
}

/**
 * Characters (ASCII, so bytes) of tool descriptors one tools/list page holds. Why: the SDK
 * client's stdio reader refuses any message over 10 MiB and closes the session, so a list of
 * 11,000 tools (Microsoft Graph's, 21 MB) killed it; a page leaves room for the envelope.
 */
export const TOOLS_PAGE_CHARS = 4 * 1024 * 1024;

/** One tools/list answer: MCP's ListToolsResult. */
export interface ToolsPage {
  tools: ToolDescriptor[];
  nextCursor?: string;
}

export interface RouteOptions {
  signal: AbortSignal;
  /** The session the call came from: for hooks that keep state per session (web-paging.ts), and the unit of fair sharing of pools and rate limits. */
  session?: string;
  /** The call's id in log lines (PoolCallOptions). */
  callId?: string;
  /** The worker's own progress reports (PoolCallOptions), when the client gave a progress token. */
  onProgress?: PoolCallOptions['onProgress'];
}

/**
 * The tool catalogue and router: toolsets register the tools their pools announced; `call`
 * validates arguments against the tool's input schema, runs the supervisor-side hook (rate
 * limits), then hands the call to the pool, through the supervisor-side `aroundCall` when the
 * pool has one (the web fetch pool's pager). Validators are compiled on first use, so a
 * 1,000-operation API costs nothing until its tools are called.
 */
export class Catalogue {
  #entries = new Map<string, Entry>();
  #listed: ToolDescriptor[] | undefined;
  #pages: ToolsPage[] | undefined;
  /** Changes with every registration, so a cursor from before it is refused. */
  #generation = 0;
  /**
   * ajv instances by dialect and `allErrors`, made when first needed. Why two: stopping at the
   * first error keeps valid calls fast, but a refusal should name every problem (up to five, as
   * the worker does), not cost the caller one round trip per mistake.
   */
  #ajvs = new Map<string, Ajv>();
  #maxResultBytes: number;

  /** `maxResultBytes`: the largest result passed on (`pools.maxResultBytes`, 8 MiB); a larger one is answered as an error. */
  constructor(options: { maxResultBytes?: number } = {}) {
    this.#maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  }

  /** Adds a pool's tools; names are `<namespace>-<name>` when a namespace is given. */
  register(pool: Pool, options: { namespace?: string; callTimeoutMs: number; beforeCall?: BeforeCall; aroundCall?: AroundCall }): void {
    const named = pool.tools.map((tool) => ({ tool, name: options.namespace ? `${options.namespace}-${tool.name}` : tool.name }));
    // Every name checked before any is added: a pool refused for a clash adds nothing (a pool
    // left out at the start and registered later is refused while the others keep serving).
    for (const { tool, name } of named) {
      const other = this.#entries.get(name);
      if (other) {
        // Namespaces can meet too: `a` with a tool `show-pet` and `a-show` with `pet`.
        const what = (pool: Pool, workerName: string, namespace?: string) => `${pool.name} ('${workerName}'${namespace === undefined ? '' : ` in namespace '${namespace}'`})`;
        throw new McpvisorError(
          'BAD_INPUT',
          `two toolsets define the tool '${name}': ${what(other.pool, other.workerName, other.namespace)} and ${what(pool, tool.name, options.namespace)}; give ${options.namespace === undefined && other.namespace === undefined ? 'one of them a namespace' : 'one of them another namespace'}`,
        );
      }
    }
    for (const { tool, name } of named) {
      this.#entries.set(name, {
        tool: name === tool.name ? tool : tool.renamed(name),
        workerName: tool.name,
        namespace: options.namespace,
        pool,
        callTimeoutMs: options.callTimeoutMs,
        beforeCall: options.beforeCall,
        aroundCall: options.aroundCall,
      });
    }
    this.#listed = undefined;
    this.#pages = undefined;
    this.#generation++;
  }

  /**
   * Every tool, in registration order: the same array until the catalogue changes, joined from the
   * descriptor texts and written as text by our transports (wire.ts), never built as objects.
   */
  list(): ToolDescriptor[] {
    this.#listed ??= preserialized<ToolDescriptor>(`[${[...this.#entries.values()].map((entry) => entry.tool.json).join(',')}]`);
    return this.#listed;
  }

  /**
   * The tools/list page a cursor names (the first without one): all tools in one page unless
   * their descriptors pass TOOLS_PAGE_CHARS, then pages of at most that, each but the last with
   * a `nextCursor`. An unknown cursor throws BAD_INPUT.
   */
  listPage(cursor?: string): ToolsPage {
    const pages = (this.#pages ??= this.#paginate());
    if (cursor === undefined) return pages[0];
    const match = /^p(\d+)g(\d+)$/.exec(cursor);
    const page = match && Number(match[2]) === this.#generation ? pages[Number(match[1])] : undefined;
    if (!page || match![1] === '0') throw new McpvisorError('BAD_INPUT', 'unknown cursor: give a nextCursor from this server\'s last tools/list, or none for the first page');
    return page;
  }

  /** How many pages tools/list takes. */
  get pageCount(): number {
    return (this.#pages ??= this.#paginate()).length;
  }

  #paginate(): ToolsPage[] {
    const groups: string[][] = [[]];
    let size = 0;
    for (const { tool } of this.#entries.values()) {
      if (size > 0 && size + tool.json.length + 1 > TOOLS_PAGE_CHARS) {
        groups.push([]);
        size = 0;
      }
      groups[groups.length - 1].push(tool.json);
      size += tool.json.length + 1;
    }
    // One page: the list itself, the array every other reader of the catalogue shares.
    if (groups.length === 1) return [{ tools: this.list() }];
    return groups.map((group, i) => ({
      tools: preserialized<ToolDescriptor>(`[${group.join(',')}]`),
      ...(i + 1 < groups.length ? { nextCursor: `p${i + 1}g${this.#generation}` } : {}),
    }));
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** The pool serving a tool, by name; undefined for a name no toolset serves. */
  poolOf(name: string): string | undefined {
    return this.#entries.get(name)?.pool.name;
  }

  /**
   * Names outside what MCP 2025-11-25 advises for tool names (1-128 of `A-Z a-z 0-9 _ - .`):
   * served as they are, but model APIs refuse some (OpenAI and Anthropic take `^[a-zA-Z0-9_-]{1,64}$`
   * or close), and a client may then drop the tool or the whole list.
   */
  get unportableNames(): string[] {
    return [...this.#entries.keys()].filter((name) => !PORTABLE_TOOL_NAME.test(name));
  }

  get size(): number {
    return this.#entries.size;
  }

  /**
   * Routes one call. Throws UNKNOWN_TOOL (a protocol error for the session to answer); every other
   * failure is a result with `isError: true`.
   */
  async call(name: string, args: Record<string, unknown> | undefined, options: RouteOptions): Promise<ToolResult> {
    const entry = this.#entries.get(name);
    if (!entry) {
      const hint = this.#similar(name);
      throw new McpvisorError('UNKNOWN_TOOL', `unknown tool '${name}'${hint ? ` (did you mean '${hint}'?)` : ''}`);
    }
    const input = args ?? {};
    if (nestedDeeperThan(input, MAX_ARGUMENT_DEPTH)) {
      return errorResult(new McpvisorError('BAD_INPUT', `arguments are nested more than ${MAX_ARGUMENT_DEPTH} levels deep`), name);
    }
    const refusal = entry.validate ? this.#check(entry, input) : this.#firstCheck(entry, input);
    if (refusal) return errorResult(refusal, name);
    let deadlineMs = entry.callTimeoutMs;
    if (entry.beforeCall) {
      const before = await this.#before(entry, input, options.signal, options.session);
      if ('error' in before) return errorResult(before.error, name);
      // The budget covers the wait (README: "budget of a call, queueing included").
      deadlineMs -= before.waitedMs;
    }
    const call = { tool: entry.workerName, arguments: input };
    const result = entry.aroundCall
      ? await entry.aroundCall(call, { signal: options.signal, deadlineMs, session: options.session, callId: options.callId, onProgress: options.onProgress }, (routed, routedOptions) => entry.pool.call(routed, routedOptions))
      : await entry.pool.call(call, { signal: options.signal, deadlineMs, session: options.session, callId: options.callId, onProgress: options.onProgress });
    const problem = resultProblem(result) ?? this.#outputProblem(entry, result);
    if (problem) return errorResult(new McpvisorError('INTERNAL', `the tool returned a result MCP clients refuse: ${problem}`), name);
    const bytes = oversizeBytes(result, this.#maxResultBytes);
    if (bytes === undefined) return result;
    const cap = this.#maxResultBytes;
    return errorResult(
      new McpvisorError('OUTPUT_TRUNCATED', `the tool of toolset ${entry.pool.name} returned ${bytes} bytes (${sizeText(bytes)}), over the ${cap}-byte (${sizeText(cap)}) cap on one result (pools.maxResultBytes); nothing of it was sent: ask for less, or page the result`, { data: { bytes, maxResultBytes: cap } }),
      name,
    );
  }

  /**
   * What is wrong with `result` by the tool's outputSchema, which the SDK client checks (it
   * throws, the result lost): structuredContent is required unless the result is an error, and
   * must match the schema whenever present.
   */
  #outputProblem(entry: Entry, result: ToolResult): string | undefined {
    const schema = entry.tool.descriptor.outputSchema;
    if (schema === undefined) return undefined;
    if (result.structuredContent === undefined) return result.isError ? undefined : 'the tool declares an outputSchema but returned no structuredContent';
    entry.validateOutput ??= this.#compile(schema, true);
    if (entry.validateOutput(result.structuredContent)) return undefined;
    const error = entry.validateOutput.errors?.[0];
    const where = `structuredContent${(error?.instancePath ?? '').replace(/\//g, '.')}`;
    return `${where} does not match the tool's outputSchema: ${error?.message ?? 'invalid'}`;
  }

  /** BAD_INPUT naming what is wrong with `input`, or undefined when the schema accepts it. */
  #check(entry: Entry, input: Record<string, unknown>): McpvisorError | undefined {
    entry.validate ??= this.#compile(entry.tool.descriptor.inputSchema, false);
    if (entry.validate(input)) return undefined;
    entry.validateAll ??= this.#compile(entry.tool.descriptor.inputSchema, true);
    const errors = (entry.validateAll(input) ? undefined : entry.validateAll.errors) ?? entry.validate.errors ?? [];
    return new McpvisorError('BAD_INPUT', describeErrors(errors, input, entry.tool.descriptor.inputSchema.required), { data: errors });
  }

  /**
   * The check of a tool's first call, which compiles its validator; of a wide schema (more than
   * MAX_COMPILED_ARGUMENTS arguments, protocol/wide-schemas.ts) each call compiles only what it
   * gives instead, and ajv forgets it after: compiling 20,000 arguments held this process, and
   * with it every session, for 6 s.
   */
  #firstCheck(entry: Entry, input: Record<string, unknown>): McpvisorError | undefined {
    const schema = entry.tool.descriptor.inputSchema;
    if (!isWideSchema(schema)) return this.#check(entry, input);
    let given: JsonObjectSchema;
    try {
      given = givenArgumentsSchema(schema, input);
    } catch (error) {
      return error as McpvisorError;
    }
    const validate = this.#compile(given, true);
    try {
      return validate(input) ? undefined : new McpvisorError('BAD_INPUT', describeErrors(validate.errors ?? [], input, schema.required), { data: validate.errors });
    } finally {
      for (const ajv of this.#ajvs.values()) ajv.removeSchema(validate.schema as object);
    }
  }

  /**
   * Runs the hook within the call's budget: the ms it took, or the error to answer. A hook still
   * waiting when the budget is spent is stopped through its signal and the call is a TIMEOUT.
   */
  async #before(entry: Entry, input: Record<string, unknown>, signal: AbortSignal, session: string | undefined): Promise<{ waitedMs: number } | { error: unknown }> {
    const started = performance.now();
    const spent = () => new McpvisorError('TIMEOUT', `the call waited its whole ${entry.callTimeoutMs} ms budget for its turn (rate limit) and was not run`);
    const budget = new AbortController();
    const timer = setTimeout(() => budget.abort(spent()), entry.callTimeoutMs);
    try {
      await entry.beforeCall!(entry.workerName, input, AbortSignal.any([signal, budget.signal]), entry.callTimeoutMs, session);
      const waitedMs = Math.ceil(performance.now() - started);
      return waitedMs < entry.callTimeoutMs ? { waitedMs } : { error: spent() };
    } catch (error) {
      return { error: budget.signal.aborted && !signal.aborted ? budget.signal.reason : error };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Creates ajv and compiles one small schema, when there are tools to validate for: ajv's load
   * and first compile cost ~20 ms that the first call would otherwise wait for.
   */
  warmUp(): void {
    if (this.#entries.size === 0) return;
    this.#ajvOf('2020-12', false).compile({ type: 'object', properties: { id: { type: 'string', format: 'date-time' } }, required: ['id'] });
  }

  #ajvOf(draft: '2020-12' | 'draft-07', allErrors: boolean): Ajv {
    const key = `${draft}/${allErrors}`;
    let ajv = this.#ajvs.get(key);
    if (!ajv) this.#ajvs.set(key, (ajv = createAjv(draft, allErrors)));
    return ajv;
  }

  #compile(inputSchema: JsonObjectSchema, allErrors: boolean): ValidateFunction {
    const ajv = this.#ajvOf('2020-12', allErrors);
    const schema = withSafeIntegers(inputSchema);
    try {
      return ajv.compile(schema);
    } catch {
      // Older drafts' forms 2020-12 refuses (a tuple as `items: [...]`, which zod-to-json-schema
      // writes for custom toolsets; draft-04's boolean exclusiveMinimum): ajv's draft-07 class.
    }
    try {
      return this.#ajvOf('draft-07', allErrors).compile(schema);
    } catch {
      // A schema ajv cannot compile must not make the tool unusable (the worker validates too):
      // its required arguments are still checked.
      return ajv.compile({ type: 'object', ...(Array.isArray(schema.required) ? { required: schema.required } : {}) });
    }
  }

  #similar(name: string): string | undefined {
    const lower = name.toLowerCase();
    for (const candidate of this.#entries.keys()) if (candidate.toLowerCase() === lower) return candidate;
    return undefined;
  }
}

/**
 * Decision: 8 MiB. The SDK's stdio client refuses a message over 10 MiB and drops the connection;
 * 8 MiB leaves room for the envelope and JSON's escapes, and is the largest `apis[].maxResultBytes`.
 */
export const DEFAULT_MAX_RESULT_BYTES = 8 * 1024 * 1024;

/**
 * Deeper arguments are refused before anything walks them recursively (serialising a call for a
 * worker overflows the stack at a few thousand levels); no real tool input comes near this.
 */
const MAX_ARGUMENT_DEPTH = 100;

/** Whether `value` has objects or arrays nested more than `limit` levels, found without recursion. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** ajv errors as one sentence naming each argument (protocol/schema-errors.ts chooses which); `args` for the values named. */
export function describeErrors(errors: ErrorObject[], args?: unknown, required?: readonly unknown[]): string {
  const parts = closestErrors(errors).map((error) => {
    const where = error.instancePath ? `argument '${error.instancePath.slice(1).replace(/\//g, '.')}'` : 'arguments';
    switch (error.keyword) {
      case 'required':
        return `missing required argument '${[error.instancePath.slice(1).replace(/\//g, '.'), (error.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.')}'`;
      case 'additionalProperties':
        return `unknown argument '${(error.params as { additionalProperty: string }).additionalProperty}'`;
      case 'type':
        return `${where} ${typeText(error, args, required)}`;
      case SAFE_INTEGER_KEYWORD:
        return `${where} ${unsafeIntegerText(error, args)}`;
      case 'enum':
        return `${where} must be one of ${JSON.stringify((error.params as { allowedValues: unknown[] }).allowedValues)}`;
      default:
        return `${where} ${error.message ?? 'is invalid'}`;
    }
  });
  return `invalid arguments: ${joinProblems(parts)}`;
}

/** ajv with formats, loaded on the first call rather than at startup. */
function createAjv(draft: '2020-12' | 'draft-07', allErrors: boolean): Ajv {
  // JSON Schema 2020-12: MCP's default dialect for tool schemas, and OpenAPI 3.1's (prefixItems,
  // dependentRequired, unevaluatedProperties); the api worker's schemas (input-schema.ts) are
  // written for it. draft-07: for older schemas 2020-12 refuses (#compile).
  const AjvClass = draft === '2020-12' ? (require('ajv/dist/2020') as typeof import('ajv/dist/2020')).default : (require('ajv') as { default: typeof import('ajv/dist/2020').default }).default;
  const addFormats = require('ajv-formats') as typeof import('ajv-formats');
  // Schemas are not checked against the JSON Schema meta-schema: compiling that validator cost ~50 ms
  // of the first call (warmUp 70 -> 21 ms without it), and a schema ajv cannot compile falls back to
  // its required arguments (#compile).
  // Formats are annotations, as in JSON Schema 2020-12, but `byte` (base64 an API decodes): an API
  // often takes more than its format says (GitHub's `created: ">=2024-01-01"` on a date-time).
  // The others are unknown to ajv, ignored without a word (logger off).
  const ajv = new AjvClass({ strict: false, allErrors, coerceTypes: false, validateFormats: true, validateSchema: false, logger: false, code: { regExp: lenientRegExp } });
  addFormats.default(ajv, ['byte']);
  addSafeIntegerKeyword(ajv);
  return ajv;
}
