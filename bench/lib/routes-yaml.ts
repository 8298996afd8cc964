/** The generated configurations of bench/routes-scale.ts and bench/reload-stalls.ts. */

/** `count` routes, a quarter of each kind, all to `service`; route i of each kind is `/e{i}/items`... */
export function mixedRoutesYaml(count: number, service: string): string {
  const lines = ['routes:'];
  const route = (route: string, path: string, hosts?: string) =>
    lines.push(
      `  - { method: GET, route: "${route}", service: "${service}", path: "${path}", public: true${hosts === undefined ? '' : `, hosts: [${hosts}]`} }`,
    );
  for (let i = 0; i < count / 4; i++) {
    route(`/e${i}/items`, `/e${i}/items`);
    route(`/p${i}/items/{id}`, `/p${i}/items/{id}`);
    route(`/s${i}/*`, `/s${i}/*`);
    route(`/h${i}/items`, `/h${i}/items`, i % 10 === 0 ? `"*.w${i}.example.com"` : `t${i}.example.com`);
  }
  return lines.join('\n') + '\n';
}
