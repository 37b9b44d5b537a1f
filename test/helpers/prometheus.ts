/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: every
 * sample belongs to a family declared by one `# TYPE` line before it, names and labels are well
 * formed, no series is written twice, values are numbers, counters are not negative, and each
 * histogram's buckets rise to a `+Inf` bucket equal to its `_count`. prom-client has no parser;
 * the npm ones accept what Prometheus refuses. Throws naming the line; returns the samples.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"\s*(,|$)/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parsePrometheus(text: string): Sample[] {
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  const types = new Map<string, string>();
  const helped = new Set<string>();
  const seen = new Set<string>();
  const samples: Sample[] = [];
  const lines = text.split('\n').slice(0, -1);
  lines.forEach((line, index) => {
    const where = `line ${index + 1} (${JSON.stringify(line.slice(0, 120))})`;
    if (line === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m;
      if (!NAME.test(name)) throw new Error(`${where}: bad metric name`);
      if (kind === 'HELP') {
        if (helped.has(name)) throw new Error(`${where}: second HELP for ${name}`);
        helped.add(name);
      } else {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type ${rest}`);
        if (types.has(name)) throw new Error(`${where}: second TYPE for ${name}`);
        if (samples.some((sample) => familyOf(sample.name, types) === name || sample.name === name)) throw new Error(`${where}: TYPE after samples of ${name}`);
        types.set(name, rest);
      }
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
    if (!m) throw new Error(`${where}: not a sample`);
    const [, name, , labelText = '', rawValue] = m;
    const labels: Record<string, string> = {};
    let rest = labelText;
    while (rest.trim() !== '') {
      const label = LABEL.exec(rest);
      if (!label) throw new Error(`${where}: bad labels`);
      if (label[1] in labels) throw new Error(`${where}: label ${label[1]} twice`);
      labels[label[1]] = label[2].replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(label[0].length);
    }
    const value = rawValue === '+Inf' ? Infinity : rawValue === '-Inf' ? -Infinity : rawValue === 'NaN' ? NaN : Number(rawValue);
    if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^[+-]Inf$|^NaN$/.test(rawValue)) throw new Error(`${where}: bad value`);
    const family = familyOf(name, types);
    if (family === undefined) throw new Error(`${where}: sample of ${name} without a TYPE line before it`);
    const key = `${name}{${Object.keys(labels).sort().map((k) => `${k}=${labels[k]}`).join(',')}}`;
    if (seen.has(key)) throw new Error(`${where}: series ${key} written twice`);
    seen.add(key);
    if (types.get(family) === 'counter' && !(value >= 0)) throw new Error(`${where}: counter below zero`);
    samples.push({ name, labels, value });
  });
  for (const [family, type] of types) if (type === 'histogram') checkHistogram(family, samples);
  return samples;
}

function familyOf(name: string, types: Map<string, string>): string | undefined {
  if (types.has(name)) return name;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      const type = types.get(base);
      if (type === 'histogram' || (type === 'summary' && suffix !== '_bucket')) return base;
    }
  }
  return undefined;
}

function checkHistogram(family: string, samples: Sample[]): void {
  const series = new Map<string, { buckets: Array<[number, number]>; count?: number }>();
  const keyOf = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).filter(([k]) => k !== 'le').sort());
  for (const sample of samples) {
    if (sample.name === `${family}_bucket`) {
      if (sample.labels.le === undefined) throw new Error(`${family}: a bucket without le`);
      const entry = series.get(keyOf(sample.labels)) ?? { buckets: [] };
      entry.buckets.push([sample.labels.le === '+Inf' ? Infinity : Number(sample.labels.le), sample.value]);
      series.set(keyOf(sample.labels), entry);
    } else if (sample.name === `${family}_count`) {
      const entry = series.get(keyOf(sample.labels)) ?? { buckets: [] };
      entry.count = sample.value;
      series.set(keyOf(sample.labels), entry);
    }
  }
  for (const [key, { buckets, count }] of series) {
    const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i++) if (sorted[i][1] < sorted[i - 1][1]) throw new Error(`${family}${key}: bucket le=${sorted[i][0]} below the one before`);
    const inf = sorted.at(-1);
    if (!inf || inf[0] !== Infinity) throw new Error(`${family}${key}: no +Inf bucket`);
    if (inf[1] !== count) throw new Error(`${family}${key}: +Inf bucket ${inf[1]} is not _count ${count}`);
  }
}

/** The value of one series, or undefined. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  return samples.find((sample) => sample.name === name && Object.entries(labels).every(([k, v]) => sample.labels[k] === v))?.value;
}
