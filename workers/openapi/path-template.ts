import { McpvisorError } from '../../protocol/errors';
import { contentText, encodeStrict } from './serialize';

/**
 * Path templates, filled here rather than by swagger-client's builder: it fills them with
 * openapi-path-templating, whose grammar takes RFC 3986 path characters only, and leaves any
 * other template as written, so `/a b/{x}`, `/ünï/{x}`, `/a|b/{x}` or `/double//{x}` sent a
 * literal `%7Bx%7D`. Here `{name}` is found as OpenAPI defines it (any characters but braces),
 * and the literal text around it is percent-encoded where a path may not hold it as written.
 */

/** A template split into literal text (encoded) and expressions. */
export interface PathTemplate {
  source: string;
  /** The template up to its `#`, if any: a fragment is never sent. */
  parts: Array<{ literal: string } | { name: string }>;
  /** The first expression after the `#`: its value could not be sent, so the template cannot be filled. */
  fragmentExpression?: string;
}

/** The Parameter Object fields a path value's serialisation reads (OpenAPI 3 and Swagger 2.0). */
export interface PathParameter {
  name: string;
  style?: string;
  explode?: boolean;
  content?: Record<string, unknown>;
  collectionFormat?: string;
  default?: unknown;
  /** The value may span segments: its `/` stay (GitHub's contents `path`, a branch `feature/x`). */
  'x-multi-segment'?: boolean;
}

/** Characters a path segment holds as written (RFC 3986 pchar), `/`, and percent-encoded triples. */
const KEPT = /%[0-9A-Fa-f]{2}|[A-Za-z0-9\-._~!$&'()*+,;=:@/]+/y;

/**
 * `source` parsed: each `{name}` an expression, the rest literal text with every character a
 * path may not hold as written percent-encoded as UTF-8 (space, non-ASCII, `|`, `[`, `]`, a
 * `%` not starting a triple). A `?` and what follows are left as written: the description put a
 * query in its path, and the query is kept. A `{` without its `}` is literal text.
 * A `#` and what follows are left out: a fragment is never sent, and APIs.guru's AWS descriptions
 * tell apart operations of one path with one (`/#X-Amz-Target=…`, `/holds/{id}#cancelDescription`);
 * encoded as `%23`, it sent their requests to another path, and a template with an expression
 * before it was refused.
 */
export function compileTemplate(source: string): PathTemplate {
  const parts: PathTemplate['parts'] = [];
  const hash = source.indexOf('#');
  const sent = hash < 0 ? source : source.slice(0, hash);
  let literal = '';
  for (let at = 0; at < sent.length; ) {
    const close = sent[at] === '{' ? sent.indexOf('}', at + 1) : -1;
    const name = close > at + 1 ? sent.slice(at + 1, close) : undefined;
    if (name !== undefined && !name.includes('{')) {
      if (literal !== '') parts.push({ literal: encodeLiteral(literal) });
      parts.push({ name });
      literal = '';
      at = close + 1;
    } else {
      literal += sent[at];
      at += 1;
    }
  }
  if (literal !== '') parts.push({ literal: encodeLiteral(literal) });
  const unsent = hash < 0 ? undefined : /\{[^{}]+\}/.exec(source.slice(hash))?.[0];
  return unsent === undefined ? { source, parts } : { source, parts, fragmentExpression: unsent };
}

function encodeLiteral(text: string): string {
  const query = text.indexOf('?');
  const path = query < 0 ? text : text.slice(0, query);
  let out = '';
  for (let at = 0; at < path.length; ) {
    KEPT.lastIndex = at;
    const kept = KEPT.exec(path);
    if (kept) {
      out += kept[0];
      at += kept[0].length;
    } else {
      const char = String.fromCodePoint(path.codePointAt(at)!);
      out += [...Buffer.from(char)].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
      at += char.length;
    }
  }
  return query < 0 ? out : out + text.slice(query);
}

/**
 * The template filled with the serialised values of its path parameters. BAD_INPUT names the
 * template when it cannot be filled (an expression after its `#`, or one no path parameter fills: it
 * would have been sent as `{x}`), and the argument when a required value is missing or when a
 * segment holding a value comes out empty, `.` or `..` (also as `%2e`, which URL parsers read
 * as a dot): `[".."]` or `{}` went to `/items/` or the parent, another endpoint.
 * `argOf` gives the tool argument of a parameter name, for messages.
 */
export function fillTemplate(template: PathTemplate, parameters: Map<string, PathParameter>, values: Map<string, unknown>, swagger: boolean, argOf: (name: string) => string): string {
  if (template.fragmentExpression !== undefined) {
    throw new McpvisorError('BAD_INPUT', `cannot build the request: the path template '${template.source}' has a '#' before ${template.fragmentExpression}, and nothing after a '#' is sent`);
  }
  let out = '';
  // The segment being written and the parameters in it, until the template's own query starts.
  let segment = '';
  let names: string[] = [];
  let inQuery = false;
  const endSegment = () => {
    if (names.length > 0 && DOT_OR_EMPTY.test(segment.replace(/%2e/gi, '.'))) {
      throw new McpvisorError('BAD_INPUT', `path argument ${names.map((name) => `'${argOf(name)}'`).join(', ')} may not be empty, '.' or '..': the path segment would be '${segment}'`);
    }
    segment = '';
    names = [];
  };
  for (const part of template.parts) {
    if ('literal' in part) {
      out += part.literal;
      if (inQuery) continue;
      const query = part.literal.indexOf('?');
      const pieces = (query < 0 ? part.literal : part.literal.slice(0, query)).split('/');
      segment += pieces[0];
      for (const piece of pieces.slice(1)) {
        endSegment();
        segment = piece;
      }
      if (query >= 0) {
        endSegment();
        inQuery = true;
      }
      continue;
    }
    const parameter = parameters.get(part.name);
    if (parameter === undefined) throw new McpvisorError('BAD_INPUT', `cannot build the request: the path template '${template.source}' has {${part.name}}, which no path parameter of the operation fills`);
    const value = values.get(part.name) ?? parameter.default;
    // A path parameter a description forgot to mark required: `{name}` would be sent.
    if (value === undefined || value === null) throw new McpvisorError('BAD_INPUT', `path argument '${argOf(part.name)}' is required`);
    let text: string;
    try {
      text = multiSegment(parameter, value) ? String(value).split('/').map(item).join('/') : swagger ? swaggerValue(parameter, value) : styledValue(parameter, value);
    } catch (error) {
      // A lone UTF-16 surrogate: the builder sent U+FFFD, where a query value is refused.
      if (error instanceof URIError) throw new McpvisorError('BAD_INPUT', `argument '${argOf(part.name)}' has a lone UTF-16 surrogate, which a URL cannot carry`);
      throw error;
    }
    // Other values are encoded whole, so they never add a segment; checked all the same.
    if (text.includes('/') && !multiSegment(parameter, value)) throw new McpvisorError('BAD_INPUT', `path argument '${argOf(part.name)}' would add a path segment`);
    out += text;
    if (!inQuery) {
      // Each segment a multi-segment value makes is checked as one of its own (`a/../b` is refused).
      const pieces = text.split('/');
      segment += pieces[0];
      names.push(part.name);
      for (const piece of pieces.slice(1)) {
        endSegment();
        segment = piece;
        names = [part.name];
      }
    }
  }
  if (!inQuery) endSegment();
  return out;
}

const DOT_OR_EMPTY = /^\.{0,2}$/;

/**
 * A value written with its `/` as they are: a primitive of a parameter marked `x-multi-segment`
 * (GitHub marks a file's `path`, a `ref`, a `basehead`), style simple. Encoded whole, a file path
 * went out as `docs%2Fintro.md`, which GitHub answers 404 for fine-grained tokens (octokit.js
 * issue 2422); each piece is still encoded, and checked as a segment.
 */
function multiSegment(parameter: PathParameter, value: unknown): boolean {
  return parameter['x-multi-segment'] === true && (value === null || typeof value !== 'object') && (parameter.style ?? 'simple') === 'simple' && parameter.content === undefined;
}

/** A value as an item of a path: objects as JSON, every character but the unreserved encoded. */
function item(value: unknown): string {
  if (value === null || value === undefined) return '';
  return encodeStrict(typeof value === 'object' ? JSON.stringify(value) : String(value));
}

const COLLECTION_SEPARATORS: Record<string, string> = { csv: ',', ssv: '%20', tsv: '%09', pipes: '%7C' };

/** Swagger 2.0: a primitive, or an array joined by its `collectionFormat` (csv by default; `multi` has no path form). */
function swaggerValue(parameter: PathParameter, value: unknown): string {
  if (!Array.isArray(value)) return item(value);
  return value.map(item).join(COLLECTION_SEPARATORS[parameter.collectionFormat ?? 'csv'] ?? ',');
}

/**
 * OpenAPI 3 style `simple` (default), `label` or `matrix`, explode false by default, as the
 * builder wrote them, except that an object's keys are encoded too (the builder sent them as
 * written, `/` included), an empty array or object is the style table's form (`;name`, `.`,
 * nothing; the builder's matrix threw) and an unexploded label joins with commas.
 * A `content` parameter is its media type's text (serialize.ts contentText), encoded.
 */
function styledValue(parameter: PathParameter, value: unknown): string {
  if (parameter.content !== undefined) return encodeStrict(contentText(Object.keys(parameter.content)[0] ?? '', value));
  const style = parameter.style ?? 'simple';
  const explode = parameter.explode ?? false;
  const name = encodeStrict(parameter.name);
  if (value === null || typeof value !== 'object') {
    if (style === 'label') return `.${item(value)}`;
    if (style === 'matrix') return `;${name}=${item(value)}`;
    return item(value);
  }
  const pairs: Array<[string | undefined, string]> = Array.isArray(value)
    ? value.map((v) => [undefined, item(v)])
    : Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).map(([k, v]) => [encodeStrict(k), item(v)]);
  // Empty: the style table's forms (its `undefined` column), `;color` and `.`, which keep the
  // route (the builder's matrix threw); simple's is nothing, and so is a segment of it alone.
  if (pairs.length === 0) return style === 'matrix' ? `;${name}` : style === 'label' ? '.' : '';
  const flat = (join: string) => pairs.map(([k, v]) => (k === undefined ? v : explode ? `${k}=${v}` : `${k}${join}${v}`)).join(join);
  // RFC 6570 `{.x}` joins with commas, `{.x*}` with dots (OpenAPI's style examples:
  // `.blue,black,brown`, `.R,100,G,200`); the builder used dots for both, so an unexploded
  // `["a", "b"]` went out as the exploded form.
  if (style === 'label') return `.${flat(explode ? '.' : ',')}`;
  if (style === 'matrix') {
    if (Array.isArray(value)) return explode ? pairs.map(([, v]) => `;${name}=${v}`).join('') : `;${name}=${flat(',')}`;
    return explode ? `;${flat(';')}` : `;${name}=${flat(',')}`;
  }
  return flat(',');
}
