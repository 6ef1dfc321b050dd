async () => {
const x = 10;
return (x * 2)
}