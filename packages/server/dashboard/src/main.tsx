import { render } from 'preact';
import { App } from './app.tsx';
import { showBidiControls } from './bidi.ts';
import './styles.css';

showBidiControls();
render(<App />, document.getElementById('app') as HTMLElement);
