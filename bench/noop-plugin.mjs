// A plugin that runs at every stage and does nothing: what the plugin stages themselves cost
// (docs/plugins.md "Performance"; bench:ab --new-candidate portico-plugins). Plain JavaScript,
// so that a built gateway loads it without a TypeScript loader, and written as `definePlugin`
// returns it (its marker key) so that it needs no import of a particular build.
export default Object.freeze({
  '~portico': 'plugin',
  onRequest() {},
  onAuthenticated() {},
  beforeUpstream() {},
  onResponse() {},
  onError() {},
});
