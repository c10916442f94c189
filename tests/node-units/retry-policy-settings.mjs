// Retry Policy option -> engine setting: the options versions 1 and 2 share, and those version 2
// (and the chat model, which takes its description) adds. One map for the tests that hold the
// panels' defaults to the engine's table.
export const SHARED_RETRY_SETTINGS = {
	strategy: 'strategy',
	baseMs: 'base_ms',
	capMs: 'cap_ms',
	maxAttempts: 'max_attempts',
	deadlineMs: 'deadline_ms',
	budgetMs: 'budget_ms',
	retryAfterCapMs: 'retry_after_cap_ms',
	deferSpreadMs: 'defer_spread_ms',
	retryStatuses: 'retry_statuses',
	healthStatuses: 'health_statuses',
	count429: 'count_429',
	retryUnsafeMethods: 'retry_unsafe_methods',
};

export const V2_RETRY_SETTINGS = {
	...SHARED_RETRY_SETTINGS,
	nextProviderWhenInputTooLong: 'next_provider_when_input_too_long',
	failOverFirst: 'fail_over_first',
	hedge: 'hedge',
	hedgeDelayMs: 'hedge_delay_ms',
	hedgeMinMs: 'hedge_min_ms',
	hedgeMaxMs: 'hedge_max_ms',
	maxHedges: 'max_hedges',
	fairShareKey: 'fair_share_key',
	fairShareWeight: 'fair_share_weight',
};
