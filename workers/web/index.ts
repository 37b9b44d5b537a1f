/** The web toolset's library surface (spec 001), as explicit named exports. */
export { WebSearcher } from './web-searcher';
export type { SearchOutcome, WebSearcherOptions } from './web-searcher';
export { WebContentFetcher } from './web-content-fetcher';
export type { WebContentFetcherOptions } from './web-content-fetcher';
export { fetchWebContent } from './content';
export type { FetchOptions, FetchResult, WebContent } from './content';
export { RateLimiter } from './rate-limiter';
export type { RateLimiterStatus } from './rate-limiter';
export { HttpClient } from './http-client';
export type { HttpClientOptions } from './http-client';
export { FetchError } from './http-fetch';
export type { FetchErrorCode, HttpResponse } from './http-fetch';
export { htmlToMarkdown } from './html-to-markdown';
export type { PageMetadata } from './metadata';
export { isBlockedAddress } from '../common/address-guard';
export { ENGINE_NAMES, getEngine } from './engines';
export type { EngineOutcome, PageContext, SearchEngine, SearchResult } from './engines';
