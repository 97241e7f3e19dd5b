datafile = 'power-cap.dat'
set terminal svg size 1000,700 dynamic background rgb 'white' font 'Sans,11'
set output 'power-cap.svg'
set title 'power-cap: tokens per joule against a GPU power cap (H100, 700 W down to 300 W)' noenhanced font ',10'
set grid
set key noenhanced below vertical font ',9'
set xlabel 'gpu.power_cap' noenhanced
set xtics ('700W' 0, '600W' 1, '500W' 2, '400W' 3, '300W' 4)
set offsets 0.2, 0.2, 0, 0
set ylabel 'over the first point (solid: tokens/J, dashed: tokens/s)'
plot datafile index 0 using 1:3 with linespoints lw 2 pt 7 lc 1 title 'llama2-7b, 256 GPUs, batch 512x4k: tokens/J', \
     datafile index 0 using 1:2 with linespoints dt 2 pt 6 lc 1 title 'llama2-7b, 256 GPUs, batch 512x4k: tokens/s', \
     datafile index 1 using 1:3 with linespoints lw 2 pt 7 lc 2 title 'llama3-70b, 2,048 GPUs, batch 1024x8k: tokens/J', \
     datafile index 1 using 1:2 with linespoints dt 2 pt 6 lc 2 title 'llama3-70b, 2,048 GPUs, batch 1024x8k: tokens/s'
