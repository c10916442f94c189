// A 20-field answer and its JSON Schema (every field required, nothing else allowed): the schema
// Answer Check's cost is measured on (scripts/bench-schema.mjs, scripts/bench-overhead.mjs) and
// the body the loopback vendor's /brief20 route answers.
const str = (minLength) => ({ type: 'string', minLength });
const num = (minimum, type = 'number') => ({ type, minimum });
export const BRIEF_SCHEMA = {
	$schema: 'https://json-schema.org/draft/2020-12/schema',
	type: 'object',
	properties: {
		title: str(1),
		summary: str(10),
		reply: str(1),
		reasoning: str(1),
		language: str(2),
		category: str(1),
		product: str(1),
		customerName: str(1),
		ticketId: str(3),
		confidence: { ...num(0), maximum: 1 },
		score: num(0),
		priority: num(1, 'integer'),
		tokens: num(0, 'integer'),
		price: num(0),
		rating: num(1),
		sentiment: { enum: ['positive', 'neutral', 'negative'] },
		tags: { type: 'array', items: str(1), minItems: 1 },
		author: {
			type: 'object',
			properties: { name: str(1), email: str(3), role: str(1) },
			required: ['name', 'email'],
			additionalProperties: false,
		},
		urgent: { type: 'boolean' },
		followUp: { type: 'boolean' },
	},
	additionalProperties: false,
};
BRIEF_SCHEMA.required = Object.keys(BRIEF_SCHEMA.properties);

export const BRIEF = {
	title: 'Refund request',
	summary: 'The customer asks for a refund of a duplicate charge.',
	reply: 'We have refunded the duplicate charge.',
	reasoning: 'Two identical charges one minute apart.',
	language: 'en',
	category: 'billing',
	product: 'Pro plan',
	customerName: 'Ada',
	ticketId: 'T-1042',
	confidence: 0.92,
	score: 7.5,
	priority: 2,
	tokens: 412,
	price: 29,
	rating: 4,
	sentiment: 'negative',
	tags: ['refund', 'billing'],
	author: { name: 'assistant', email: 'bot@example.com', role: 'support' },
	urgent: false,
	followUp: true,
};
