#!/usr/bin/env node
import { isCommand } from './command';
import { webSearchMcpProfile } from './web-profile';

if (isCommand('web-search-mcp')) void (require('../profile') as typeof import('../profile')).runProfile(webSearchMcpProfile());
