// n8n's internal REST API as its editor uses it: the owner set up without a human at the setup
// screen, then logged in; every call carries the session cookie and returns the body's `data`.

export const OWNER = {
	email: 'owner@example.com',
	firstName: 'Demo',
	lastName: 'Owner',
	password: 'Demo-owner-1',
};

/** `rest(method, route, body)` for the n8n at `base` (http://127.0.0.1:<port>), signed in. */
export async function ownerSession(base) {
	let cookie = '';
	const rest = async (method, route, body) => {
		const r = await fetch(`${base}/rest${route}`, {
			method,
			headers: { 'content-type': 'application/json', cookie },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const setCookie = r.headers.get('set-cookie');
		if (setCookie) cookie = setCookie.split(';')[0];
		const text = await r.text();
		if (!r.ok) throw new Error(`${method} /rest${route}: ${r.status} ${text.slice(0, 500)}`);
		return text ? JSON.parse(text).data : null;
	};
	await rest('POST', '/owner/setup', OWNER);
	await rest('POST', '/login', { emailOrLdapLoginId: OWNER.email, password: OWNER.password });
	return { rest, cookie: () => cookie };
}
