// How both browser suites run their scenarios: each one timed, reported as `ok` or `FAIL` with its stack, a
// picture taken of a failure, and E2E_ONLY=<words>[|<words>…] to run the matching ones only (CI runs them all).

/** A runner: `test(name, body)` runs one scenario; `finish()` prints the tally and exits 0 only if all passed. */
export function scenarios(onFailure) {
  const results = [];
  async function test(name, body) {
    if (process.env.E2E_ONLY && !process.env.E2E_ONLY.split("|").some((words) => name.includes(words))) return;
    const started = Date.now();
    try {
      await body();
      results.push({ name, ok: true });
      console.log(`ok   ${name} (${Date.now() - started} ms)`);
    } catch (error) {
      results.push({ name, ok: false });
      console.log(`FAIL ${name}: ${error && error.stack ? error.stack : error}`);
      await onFailure(name.replace(/\W+/g, "-")).catch(() => {});
    }
  }
  function finish() {
    const failed = results.filter((r) => !r.ok).length;
    console.log(`${results.length - failed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
  }
  return { test, finish };
}
