type Delete_Input = Record<string, unknown>
type Delete_Output = unknown
type _3dRenderInput = Record<string, unknown>
type _3dRenderOutput = unknown

declare const codemode: {
	/**
	 * delete
	 */
	delete_: (input: Delete_Input) => Promise<Delete_Output>;

	/**
	 * 3d-render
	 */
	_3d_render: (input: _3dRenderInput) => Promise<_3dRenderOutput>;
}