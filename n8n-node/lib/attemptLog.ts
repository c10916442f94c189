// One attempt's log line: the healthy path at debug (n8n's logger costs ~0.2 ms a line), retries,
// failures and probes at info with the engine's reading of the outcome. Redacted: the URL without
// its query string (it may hold keys), no headers, no body.
import type { AttemptLog, Outcome } from './engine';
import type { CallStep } from './hedgedCalls';
import type { ItemContext } from './itemContext';

export function logAttempt(
	c: ItemContext,
	step: CallStep,
	outcome: Outcome,
	log: AttemptLog | undefined,
) {
	const req = c.plan.requests[step.provider];
	if (log?.health === 'success' && step.attempt === 1 && !step.probe) {
		// The healthy path: n8n's logger costs ~0.2 ms a line (stack capture, JSON, stdout), so a
		// first-attempt success is a debug line; retries, failures and probes stay at info.
		c.logger.debug('resilient-provider-call attempt', {
			provider: req.name,
			attempt: 1,
			correlationId: c.correlationId,
		});
		return;
	}
	let url = req.url;
	try {
		const u = new URL(req.url);
		url = `${u.origin}${u.pathname}`; // no query string: it may hold keys
	} catch {
		/* validated earlier */
	}
	c.logger.info('resilient-provider-call attempt', {
		url,
		method: req.method,
		provider: req.name,
		// The engine's reading of the outcome: a status, "5XX", or an error code.
		outcome: log?.outcome,
		streamBroken: outcome.kind === 'broken' || undefined,
		check: outcome.kind === 'status' ? (outcome.failed_check ?? undefined) : undefined,
		attempt: step.attempt,
		probe: step.probe,
		hedge: step.hedging?.hedge || undefined,
		waitMs: log?.wait_ms ?? 0,
		retryAfter: log?.retry_after ?? false,
		correlationId: c.correlationId,
	});
}
