import type { ToolsetFactory } from './types';

/** Plans for the openapi toolset. Not built yet: contributes nothing. */
export const openapiToolsets: ToolsetFactory = () => [];
