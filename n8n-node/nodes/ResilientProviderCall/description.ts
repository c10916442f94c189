// The node's parameters, described as data (as n8n's own nodes do). Defaults match README's table.
import type { INodeProperties } from 'n8n-workflow';

const ms = (displayName: string, name: string, def: number, description: string): INodeProperties => ({
  displayName, name, type: 'number', default: def, typeOptions: { minValue: 0 }, description,
});

const provider: INodeProperties[] = [
  { displayName: 'Name', name: 'name', type: 'string', default: '', required: true, description: 'Unique in the chain; provider state (breaker, cooldown) is kept under this name' },
  { displayName: 'Method', name: 'method', type: 'options', default: 'GET', options: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'].map((m) => ({ name: m, value: m })) },
  { displayName: 'URL', name: 'url', type: 'string', default: '', required: true, placeholder: 'https://api.example.com/v1/things' },
  { displayName: 'Query (JSON)', name: 'queryJson', type: 'json', default: '{}' },
  { displayName: 'Headers (JSON)', name: 'headersJson', type: 'json', default: '{}', description: 'Plain headers. Keys go in the Resilient Provider Secrets credential, never here.' },
  { displayName: 'Body (JSON)', name: 'bodyJson', type: 'json', default: '', description: 'Request body; empty sends none. Expressions work.' },
  { displayName: 'Secret Name', name: 'secretName', type: 'string', default: '', description: 'Name of a secret in the Resilient Provider Secrets credential (e.g. openai); empty for none' },
  { displayName: 'Secret Header', name: 'secretHeader', type: 'string', default: 'Authorization', description: 'Header that carries the secret value' },
  { displayName: 'Response Must Contain', name: 'requiredPath', type: 'string', default: '', placeholder: 'choices.0.message.content', description: 'Dot path that must hold a non-empty value in the JSON response; otherwise the answer counts as a failure of this provider and the chain moves on' },
  ms('Per-Attempt Deadline (ms)', 'deadlineMs', 0, 'Ends the attempt even if bytes still trickle in. 0 = node default.'),
  { displayName: 'Max Attempts', name: 'maxAttempts', type: 'number', default: 0, description: 'Attempts on this provider per item. 0 = node default.' },
  { displayName: 'Breaker Threshold', name: 'threshold', type: 'number', default: 0, description: 'Failures that open the breaker (cool the provider down). 0 = node default.' },
  ms('Open Window (ms)', 'openMs', 0, 'How long the provider is skipped once tripped. 0 = node default.'),
  { displayName: 'Rate Limit: Requests', name: 'rateLimitRequests', type: 'number', default: 0, description: 'Soft limit shared by every execution (e.g. 80% of the vendor quota). 0 = none.' },
  ms('Rate Limit: Period (ms)', 'rateLimitPeriodMs', 60000, 'Period of the rate limit'),
  { displayName: 'Rate Limit: Burst', name: 'rateLimitBurst', type: 'number', default: 1 },
  { displayName: 'Max In Flight', name: 'maxInFlight', type: 'number', default: 0, description: 'Cap on calls in flight to this provider across executions. 0 = none.' },
];

export const properties: INodeProperties[] = [
  {
    displayName: 'Operation', name: 'operation', type: 'options', noDataExpression: true, default: 'callChain',
    options: [
      { name: 'Call Chain', value: 'callChain', action: 'Call a fallback chain of providers', description: 'Call the providers in order with retries, breaker and cooldown' },
      { name: 'Get Provider State', value: 'getState', action: 'Get the state of each provider', description: 'Breaker state (0 closed, 1 half-open, 2 open) and counters per provider of the chain' },
      { name: 'Reset Provider', value: 'reset', action: 'Reset providers', description: "Forget providers' breaker, gate and counters" },
    ],
  },
  { displayName: 'Providers to Reset', name: 'resetProviders', type: 'string', default: '', placeholder: 'primary, fallback', description: 'Comma-separated provider names; empty resets every provider of the chain', displayOptions: { show: { operation: ['reset'] } } },
  {
    displayName: 'Providers', name: 'providers', type: 'fixedCollection', default: {}, placeholder: 'Add Provider',
    typeOptions: { multipleValues: true, sortable: true },
    description: 'The fallback chain, tried in this order',
    options: [{ displayName: 'Provider', name: 'provider', values: provider }],
  },
  {
    displayName: 'Retry Policy', name: 'retryPolicy', type: 'collection', default: {}, placeholder: 'Change Retry Policy',
    options: [
      { displayName: 'Backoff Strategy', name: 'strategy', type: 'options', default: 'full_jitter', options: [
        { name: 'Full Jitter (Recommended)', value: 'full_jitter' }, { name: 'Equal Jitter', value: 'equal_jitter' },
        { name: 'Decorrelated', value: 'decorrelated' }, { name: 'None (Lockstep, Avoid)', value: 'none' }] },
      ms('Base Delay (ms)', 'baseMs', 400, 'Ceiling of the first retry'),
      ms('Max Delay (ms)', 'capMs', 20000, 'Cap of every delay'),
      { displayName: 'Max Attempts per Provider', name: 'maxAttempts', type: 'number', default: 3 },
      ms('Per-Attempt Deadline (ms)', 'deadlineMs', 10000, 'Whole-response deadline of one attempt'),
      ms('Item Budget (ms)', 'budgetMs', 60000, 'Total time an item may spend; then it is deferred'),
      ms('Retry-After Cap (ms)', 'retryAfterCapMs', 60000, 'Longest server-requested wait slept in place; longer hints close the provider for everyone and the item moves on'),
      ms('Defer Spread (ms)', 'deferSpreadMs', 10000, 'Jitter added to retry_at so deferred items do not return together'),
      { displayName: 'Retryable Statuses', name: 'retryStatuses', type: 'string', default: '408,425,429,500,502,503,504' },
      { displayName: 'Statuses Counted Against Provider', name: 'healthStatuses', type: 'string', default: '408,500-599', description: '4xx caused by our own request should never be here' },
      { displayName: 'Count 429 Against Provider', name: 'count429', type: 'boolean', default: false },
      { displayName: 'Add Idempotency-Key (POST/PATCH)', name: 'addIdempotencyKey', type: 'boolean', default: true },
      { displayName: 'Idempotency Key', name: 'idempotencyKey', type: 'string', default: '', description: 'Empty: a hash of the item JSON and the provider name, so a deferred item re-run later sends the same key' },
      { displayName: 'Retry POST/PATCH Without Key', name: 'retryUnsafeMethods', type: 'boolean', default: false, description: 'Only for endpoints documented as idempotent' },
    ],
  },
  {
    displayName: 'Breaker', name: 'breaker', type: 'collection', default: {}, placeholder: 'Change Breaker',
    options: [
      { displayName: 'Trip Rule', name: 'tripRule', type: 'options', default: 'consecutive', options: [
        { name: 'Consecutive Failures Within Window', value: 'consecutive' }, { name: 'Failure Rate Over Window', value: 'failure_rate' }] },
      { displayName: 'Threshold', name: 'threshold', type: 'number', default: 5 },
      ms('Window (ms)', 'windowMs', 60000, 'Failures older than this do not count'),
      { displayName: 'Failure Rate', name: 'failureRate', type: 'number', default: 0.5, typeOptions: { minValue: 0, maxValue: 1, numberPrecision: 2 } },
      { displayName: 'Minimum Calls', name: 'minCalls', type: 'number', default: 10 },
      ms('Open Window (ms)', 'openMs', 30000, 'Cooldown after a trip'),
      { displayName: 'Open Window Growth', name: 'openGrowth', type: 'number', default: 2, typeOptions: { numberPrecision: 2 } },
      ms('Max Open Window (ms)', 'openMaxMs', 600000, 'Cap of the growing window'),
      { displayName: 'Half-Open Probes', name: 'halfOpenProbes', type: 'number', default: 1, description: 'Real calls let through fleet-wide after the window; 0 = no probe, calls pass and one failure re-arms' },
      { displayName: 'Successes to Close', name: 'successesToClose', type: 'number', default: 1 },
    ],
  },
  { displayName: 'Item Concurrency', name: 'itemConcurrency', type: 'number', default: 1, typeOptions: { minValue: 1 }, description: 'Items of one execution in flight at once. Their first calls race before a failure is recorded: a dead provider gets at most threshold + concurrency - 1 calls.' },
  { displayName: 'State Store', name: 'stateStore', type: 'options', default: 'memory', options: [
    { name: 'In Memory (This n8n Process)', value: 'memory' },
    { name: 'Redis (Shared by All Workers)', value: 'redis' },
    { name: 'Postgres (Shared by All Workers)', value: 'postgres' }] },
  { displayName: 'In-memory state is shared by every execution in this n8n process, but not between queue-mode workers.', name: 'memoryNotice', type: 'notice', default: '', displayOptions: { show: { stateStore: ['memory'] } } },
  {
    displayName: 'Store Options', name: 'storeOptions', type: 'collection', default: {}, placeholder: 'Change Store Options',
    displayOptions: { show: { stateStore: ['redis', 'postgres'] } },
    options: [
      { displayName: 'Key Prefix', name: 'keyPrefix', type: 'string', default: 'rpc:', description: 'Redis keys: <prefix>{<scope>}:<provider>:<breaker|gate|in_flight>' },
      { displayName: 'Redis Cluster', name: 'redisCluster', type: 'boolean', default: false, description: "Treat the credential's host:port as a cluster seed node (database must be 0)" },
      { displayName: 'Table Name', name: 'tableName', type: 'string', default: 'resilient_provider_state', description: 'Postgres table, created on first use' },
      { displayName: 'Operation Timeout (ms)', name: 'operationTimeoutMs', type: 'number', default: 2000 },
      { displayName: 'On Store Failure', name: 'onStoreFailure', type: 'options', default: 'failOpen', options: [
        { name: "Fail Open (Use This Process's Memory, Mark the Item)", value: 'failOpen' },
        { name: 'Fail Closed (Defer the Item: store_unavailable)', value: 'failClosed' }] },
    ],
  },
  { displayName: 'State Scope', name: 'stateScope', type: 'options', default: 'provider', options: [
    { name: 'Provider Name (Shared Across Workflows)', value: 'provider' }, { name: 'This Workflow', value: 'workflow' }] },
  { displayName: 'On Exhaustion', name: 'onExhaustion', type: 'options', default: 'deferred', options: [
    { name: 'Send to Deferred Output', value: 'deferred' }, { name: 'Use Default Value (Degraded Success)', value: 'default' }] },
  { displayName: 'Default Value (JSON)', name: 'defaultValueJson', type: 'json', default: '{}', displayOptions: { show: { onExhaustion: ['default'] } } },
];
