import type { ToolsetFactory } from './types';

/** Plans for the shell toolset. Not built yet: contributes nothing. */
export const shellToolsets: ToolsetFactory = () => [];
