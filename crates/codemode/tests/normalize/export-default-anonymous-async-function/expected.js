async () => {
return (async function () { return 42; })();
}