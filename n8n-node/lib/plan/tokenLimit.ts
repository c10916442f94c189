// A provider's Token Limits as the panel holds them → the engine's `token_limit`: tokens per
// minute (in total, input and output apart), the output reserve, a spend cap per UTC day or month and the prices per million
// tokens. Handed over as set (0 or empty is none); ranges and what they mean are the engine's.
import type { IDataObject } from 'n8n-workflow';
import type { TokenLimitConfig } from '../engine';
import type { FieldReader } from './fields';

/** The panel's names of a provider's token settings (Call Chain's Options, the chat model's
 * Token Limits), as the rows carry them. */
export const TOKEN_PARAMETERS = [
	'tokensPerMinute',
	'inputTokensPerMinute',
	'outputTokensPerMinute',
	'outputReserve',
	'spendCap',
	'spendPeriod',
	'priceInput',
	'priceOutput',
	'priceCachedInput',
	'priceCacheWrite',
	'priceReasoning',
] as const;

/** The provider's token limits, or undefined when it sets none. */
export function readTokenLimit(
	p: IDataObject,
	read: FieldReader,
	where: string,
): TokenLimitConfig | undefined {
	const whole = (name: string) => read.num(p[name], name, where);
	const money = (name: string) => read.num(p[name], name, where, false);
	const period = read.text(p.spendPeriod);
	if (period !== undefined && period !== 'day' && period !== 'month')
		read.fail(
			`${where}: "Spend Period" must be day or month, got ${JSON.stringify(period.slice(0, 50))}`,
		);
	const limit: TokenLimitConfig = {
		tokens_per_minute: whole('tokensPerMinute'),
		input_tokens_per_minute: whole('inputTokensPerMinute'),
		output_tokens_per_minute: whole('outputTokensPerMinute'),
		output_reserve: whole('outputReserve'),
		spend_cap: money('spendCap'),
		spend_period: period as TokenLimitConfig['spend_period'],
		price_input: money('priceInput'),
		price_output: money('priceOutput'),
		price_cached_input: money('priceCachedInput'),
		price_reasoning: money('priceReasoning'),
		price_cache_write: money('priceCacheWrite'),
	};
	const set = Object.fromEntries(Object.entries(limit).filter(([, v]) => v !== undefined));
	return Object.keys(set).length ? (set as TokenLimitConfig) : undefined;
}
