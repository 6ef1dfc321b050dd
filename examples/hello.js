// A program as an agent would write it: calls to a connector (here the example's in-memory `echo`), data
// shaping in between, console output, and a result.
async () => {
  const greeting = await echo.greet({ name: "world" });
  const items = [];
  for (let i = 0; i < 3; i++) {
    items.push((await echo.item({ i })).args.i * 10);
  }
  console.log("greeted", greeting.args.name);
  try {
    await echo.fail({ message: "connectors can fail; programs can catch it" });
  } catch (e) {
    console.warn(e.message);
  }
  return { greeting, items, at: new Date(0) };
};
