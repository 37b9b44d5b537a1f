import type { ToolsetFactory } from './types';

/** Plans for the web toolset. Not built yet: contributes nothing. */
export const webToolsets: ToolsetFactory = () => [];
