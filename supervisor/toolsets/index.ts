import type { Config } from '../../config/schema';
import type { Logger } from '../logger';
import { customToolsets } from './custom';
import { openapiToolsets } from './openapi';
import { shellToolsets } from './shell';
import type { PlanContext, ToolsetFactory, ToolsetPlan } from './types';
import { webToolsets } from './web';

const FACTORIES: ToolsetFactory[] = [shellToolsets, webToolsets, openapiToolsets, customToolsets];

/** Every toolset the configuration enables, in a stable order. */
export function planToolsets(config: Config, logger: Logger, context: PlanContext = {}): ToolsetPlan[] {
  return FACTORIES.flatMap((factory) => factory(config, logger, context));
}

export type { BeforeCall, PlanContext, PoolPlan, ProcessPoolPlan, ThreadPoolPlan, ToolsetFactory, ToolsetPlan } from './types';
