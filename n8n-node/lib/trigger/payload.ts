// One trigger item from an event text as the engine wrote it (src/report/event.rs): the event's fields,
// with the scope the trigger watches. Events the trigger was not asked for give none: a breaker
// transition by the phase it entered, a spend cap reached (`spend_cap`, alone or on the
// transition the same write made) as *Spend Cap Reached*.
import type { IDataObject } from 'n8n-workflow';

/** The trigger's *Fire On* value for a spend cap reached (the event's `spend_cap`). */
export const SPEND_CAP_REACHED = 'spendCapReached';

export function triggerPayload(
	event: string,
	scope: string,
	wanted: string[],
): IDataObject | undefined {
	const e = JSON.parse(event) as IDataObject;
	const asked =
		(e.to !== undefined && wanted.includes(String(e.to))) ||
		(e.spend_cap !== undefined && wanted.includes(SPEND_CAP_REACHED));
	if (!asked) return undefined;
	return { provider: e.provider, scope, ...e };
}
