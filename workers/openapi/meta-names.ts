/** Names of the three meta-tools of spec 000; endpoint tools never take them. */
export const META_TOOL_NAMES = ['list-api-endpoints', 'get-api-endpoint-schema', 'invoke-api-endpoint'] as const;
export type MetaToolName = (typeof META_TOOL_NAMES)[number];
