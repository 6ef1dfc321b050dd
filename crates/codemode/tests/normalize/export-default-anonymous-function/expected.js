async () => {
return (function() { return 42; })();
}