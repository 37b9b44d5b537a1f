import type { Config } from '../../config/schema';
import type { Logger } from '../logger';
import { customToolsets } from './custom';
import { openapiToolsets } from './openapi';
import { shellToolsets } from './shell';
import type { ToolsetFactory, ToolsetPlan } from './types';
import { webToolsets } from './web';

const FACTORIES: ToolsetFactory[] = [shellToolsets, webToolsets, openapiToolsets, customToolsets];

/** Every toolset the configuration enables, in a stable order. */
export function planToolsets(config: Config, logger: Logger): ToolsetPlan[] {
  return FACTORIES.flatMap((factory) => factory(config, logger));
}

export type { BeforeCall, PoolPlan, ProcessPoolPlan, ThreadPoolPlan, ToolsetFactory, ToolsetPlan } from './types';
