// A provider's limits in tokens and money, as Call Chain's LLM providers and the chat model's
// models show them: tokens per minute shared by the fleet (in total, or input and output apart), the output a call reserves when its
// request sets no maximum, a spend cap per UTC day or month and the prices it is spent at.
import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';
import { OUTPUT_RESERVE } from '../../../lib/engineConstants';
import { numberField } from './numberField';

const price = (displayName: string, name: string, description: string): INodeProperties => ({
	displayName,
	name,
	type: 'number',
	default: 0,
	typeOptions: { minValue: 0, numberPrecision: 4 },
	description,
});

/** The fields, each shown where `displayOptions` says (Call Chain: its call only). */
export function tokenFields(displayOptions?: IDisplayOptions): INodeProperties[] {
	const fields: INodeProperties[] = [
		numberField(
			'Tokens per Minute',
			'tokensPerMinute',
			0,
			"The vendor's token limit per minute, shared by every execution and worker (input and output tokens); a call reserves its estimate before it goes and settles at the usage its answer reports. 0: none.",
		),
		numberField(
			'Input Tokens per Minute',
			'inputTokensPerMinute',
			0,
			"The vendor's input token limit per minute where it limits input and output apart (Anthropic's ITPM), shared by every execution and worker. 0: none.",
		),
		numberField(
			'Output Tokens per Minute',
			'outputTokensPerMinute',
			0,
			"The vendor's output token limit per minute where it limits input and output apart (Anthropic's OTPM): a call reserves its maximum output. 0: none.",
		),
		numberField(
			'Output Tokens to Reserve',
			'outputReserve',
			OUTPUT_RESERVE,
			"Output tokens a call reserves when its request sets no maximum (the request's Max Tokens otherwise)",
		),
		{
			displayName: 'Spend Cap',
			name: 'spendCap',
			type: 'number',
			default: 0,
			typeOptions: { minValue: 0, numberPrecision: 4 },
			description:
				'Most to spend on this provider per Spend Period, in the currency of its prices; once reached no worker calls it until the period ends (the calls already out still count). 0: none.',
		},
		{
			displayName: 'Spend Period',
			name: 'spendPeriod',
			type: 'options',
			default: 'day',
			options: [
				{ name: 'Day (UTC)', value: 'day' },
				{ name: 'Month (UTC)', value: 'month' },
			],
			description: 'The period a Spend Cap is for',
		},
		price('Price per Million Input Tokens', 'priceInput', 'What a million input tokens cost'),
		price('Price per Million Output Tokens', 'priceOutput', 'What a million output tokens cost'),
		price(
			'Price per Million Cached Input Tokens',
			'priceCachedInput',
			'What a million input tokens read from the vendor cache cost; 0: the input price',
		),
		price(
			'Price per Million Cache Write Tokens',
			'priceCacheWrite',
			"What a million input tokens written to the vendor cache cost (Anthropic's cache_creation_input_tokens); 0: 1.25x the input price, Anthropic's 5-minute cache",
		),
		price(
			'Price per Million Reasoning Tokens',
			'priceReasoning',
			'What a million reasoning tokens cost; 0: the output price',
		),
	];
	return displayOptions ? fields.map((f) => ({ ...f, displayOptions })) : fields;
}
