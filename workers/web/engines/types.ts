/** Spec 001 SearchResult. */
export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
  icon?: string;
}

/** What a page said: results (possibly none), or that the engine refused us. */
export type EngineOutcome =
  | { kind: 'results'; results: SearchResult[] }
  | { kind: 'blocked'; reason: string };

export interface PageContext {
  /** HTTP status of the main document (0 when unknown). */
  status: number;
  /** URL the page was loaded from, for resolving relative links. */
  url: string;
  maxResults: number;
}

/**
 * A search engine as a pure parser: how to build the search URL from a base URL, and how to
 * read a result page. Parsers never touch the network, so they are tested on saved pages.
 */
export interface SearchEngine {
  name: string;
  /** The public base URL; `web.search.engineUrl` replaces it (tests, mirrors). */
  defaultBaseUrl: string;
  /**
   * The longest query (in characters: code points) the engine takes, as its own search box
   * limits it; a longer one is not sent to it (web-searcher.ts).
   */
  maxQueryChars: number;
  searchUrl(query: string, baseUrl: string): string;
  parse(html: string, context: PageContext): EngineOutcome;
}
