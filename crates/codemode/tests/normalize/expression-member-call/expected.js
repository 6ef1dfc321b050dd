async () => {
const a = [1];
return (a.map((x) => x * 2).join(','))
}