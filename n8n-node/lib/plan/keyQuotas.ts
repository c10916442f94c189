// Key Quotas as the user set them, handed to the engine as they are (it checks each and names
// the field: key_quotas[k].limit).
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import type { KeyQuotaConfig } from '../engine';
import type { FieldReader } from './fields';

export function readKeyQuotas(
	ctx: Pick<IExecuteFunctions, 'getNodeParameter'>,
	i: number,
	read: FieldReader,
): KeyQuotaConfig[] {
	const rows = (ctx.getNodeParameter('keyQuotas.quota', i, []) as IDataObject[]) ?? [];
	return rows.map((q, k) => ({
		measure: read.text(q.measure) ?? '',
		per: read.text(q.per) ?? '',
		limit: read.num(q.atMost, 'At Most', `Key Quotas (quota ${k + 1})`, false) ?? 0,
	}));
}
