async () => {
const é = 'ü';
return (é + '😀')
}