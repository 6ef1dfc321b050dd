async () => {
function helper() { return 1; }
return (helper())
}