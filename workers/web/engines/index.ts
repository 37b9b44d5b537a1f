import { bing } from './bing';
import { brave } from './brave';
import { duckduckgo } from './duckduckgo';
import { google } from './google';
import { mojeek } from './mojeek';
import { startpage } from './startpage';
import type { SearchEngine } from './types';

const ENGINES: Record<string, SearchEngine> = { duckduckgo, bing, brave, startpage, mojeek, google };

/** Names of the engines we can parse. */
export const ENGINE_NAMES = Object.keys(ENGINES);

/** The engine of that name (case-insensitive); throws an Error naming the known ones otherwise. */
export function getEngine(name: string): SearchEngine {
  const engine = ENGINES[name.toLowerCase()];
  if (!engine) throw new Error(`unknown search engine '${name}'; known: ${ENGINE_NAMES.join(', ')}`);
  return engine;
}

export type { EngineOutcome, PageContext, SearchEngine, SearchResult } from './types';
