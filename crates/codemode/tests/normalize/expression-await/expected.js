async () => {
return (await fetch('http://example.com'))
}